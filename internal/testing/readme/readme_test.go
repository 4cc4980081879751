package readme

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// snippetLine names the program a ```go block of README.md or of a docs/*.md
// file is: it must be the last non-blank line before the block (GitHub does
// not render it).
var snippetLine = regexp.MustCompile(`^<!-- snippet: (internal/testing/readme/[a-z0-9]+/main\.go) -->$`)

// block is one fenced code block of a Markdown document.
type block struct {
	lang    string
	line    int    // line of the opening fence, 1-based
	snippet string // path named by the snippet line before it, if any
	body    string // lines between the fences, each ending in "\n"
}

// moduleRoot is the directory of go.mod above the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// fencedBlocks returns the fenced code blocks of the Markdown document md;
// name is its path, for messages.
func fencedBlocks(t *testing.T, name string, md []byte) []block {
	t.Helper()
	var (
		blocks   []block
		cur      *block
		body     strings.Builder
		lastText string // last non-blank line outside a block
	)
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &block{lang: strings.TrimSpace(strings.TrimPrefix(line, "```")), line: n}
			if m := snippetLine.FindStringSubmatch(lastText); m != nil {
				cur.snippet = m[1]
			}
			body.Reset()
		case cur != nil && line == "```":
			cur.body = body.String()
			blocks = append(blocks, *cur)
			cur, lastText = nil, ""
		case cur != nil:
			body.WriteString(line)
			body.WriteString("\n")
		case strings.TrimSpace(line) != "":
			lastText = line
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("%s:%d: code block never closed", name, cur.line)
	}
	return blocks
}

// firstDiff describes where got (the block in the document) and want (the
// program) first differ, by line.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl || i >= len(g) || i >= len(w) {
			return fmt.Sprintf("line %d of the block:\n  document: %q\n  program:  %q", i+1, gl, wl)
		}
	}
	return "identical"
}

// documents returns the Markdown files whose Go snippets are checked:
// README.md, then every docs/*.md, relative to root and slash-separated.
func documents(t *testing.T, root string) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"README.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.ToSlash(rel))
	}
	sort.Strings(names[1:])
	return names
}

// TestREADMESnippets checks that every ```go block in README.md and in
// docs/*.md is, byte for byte, a program under internal/testing/readme named
// by the <!-- snippet: --> line above it, that every such program is shown in
// exactly one of those files, and that the programs build. A snippet that
// stops compiling or drifts from its program fails here.
func TestREADMESnippets(t *testing.T) {
	root := moduleRoot(t)
	shown := map[string]string{} // program -> "file:line" of its block
	readmeGoBlocks := 0
	for _, name := range documents(t, root) {
		md, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range fencedBlocks(t, name, md) {
			at := fmt.Sprintf("%s:%d", name, b.line)
			if b.lang != "go" {
				if b.snippet != "" {
					t.Errorf("%s: the snippet line names %s but the block is %q, not go", at, b.snippet, b.lang)
				}
				continue
			}
			if name == "README.md" {
				readmeGoBlocks++
			}
			if b.snippet == "" {
				t.Errorf("%s: a ```go block without a <!-- snippet: internal/testing/readme/NAME/main.go --> line before it: keep its program there so that it is compiled", at)
				continue
			}
			if prev, dup := shown[b.snippet]; dup {
				t.Errorf("%s: %s is already shown at %s: show each program once", at, b.snippet, prev)
				continue
			}
			shown[b.snippet] = at
			want, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(b.snippet)))
			if err != nil {
				t.Errorf("%s: %v", at, err)
				continue
			}
			if b.body != string(want) {
				t.Errorf("%s: the block differs from %s (copy the program into the document, or the document into the program): %s",
					at, b.snippet, firstDiff(b.body, string(want)))
			}
		}
	}
	if readmeGoBlocks == 0 {
		t.Fatal("README.md has no ```go blocks: is this the right README?")
	}

	programs, err := filepath.Glob(filepath.Join(root, "internal", "testing", "readme", "*", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	var orphans []string
	for _, p := range programs {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := shown[filepath.ToSlash(rel)]; !ok {
			orphans = append(orphans, filepath.ToSlash(rel))
		}
	}
	sort.Strings(orphans)
	for _, o := range orphans {
		t.Errorf("%s is shown nowhere in README.md or docs/*.md: show it (after a <!-- snippet: %s --> line) or remove it", o, o)
	}

	// Compile the programs: a type error fails here, not only in go vet
	// ./... of the whole module (the go command of this test run is first on
	// PATH under go test). go vet type-checks exactly as the compiler does,
	// without linking; what only the linker would miss, a main function, is
	// checked by parsing.
	for _, p := range programs {
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
		if err != nil {
			t.Error(err)
			continue
		}
		hasMain := false
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == "main" {
				hasMain = true
			}
		}
		if f.Name.Name != "main" || !hasMain {
			t.Errorf("%s: not a program (package main with func main): a reader could not run it", p)
		}
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to compile the snippet programs: %v", err)
	}
	cmd := exec.Command(goTool, "vet", "./internal/testing/readme/...")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("a snippet program does not compile (or go vet finds a mistake in it): %v\n%s", err, out)
	}
}

// readmeMaxLines and firstScreen keep README.md short enough to read in
// ten minutes: the manuals are in docs/.
const (
	readmeMaxLines = 150
	firstScreen    = 40 // lines
)

// firstScreenMust is what a newcomer must find in README.md's first
// screen: the project's two commands and every HELM_DRIVER name of the
// driver table, in backquotes as the table spells them.
var firstScreenMust = []string{
	"make quickstart", "make test",
	"`postgres`", "`mysql`", "`sqlite`", "`redis`", "`cosmos`", "`crsplit`", "`memstore`",
}

// TestREADMEFirstScreen checks that README.md is at most readmeMaxLines
// lines long and that its first firstScreen lines hold firstScreenMust.
func TestREADMEFirstScreen(t *testing.T) {
	md, err := os.ReadFile(filepath.Join(moduleRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(md), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > readmeMaxLines {
		t.Errorf("README.md:%d: the README is %d lines, more than %d: move the detail to a manual under docs/ and link it",
			readmeMaxLines+1, len(lines), readmeMaxLines)
	}
	head := strings.Join(lines[:min(firstScreen, len(lines))], "")
	for _, want := range firstScreenMust {
		if !strings.Contains(head, want) {
			t.Errorf("README.md:1-%d: the first screen does not mention %s (the two commands and the driver table, with every HELM_DRIVER name, belong there)", firstScreen, want)
		}
	}
}
