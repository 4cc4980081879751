package kubebuild

import (
	"bufio"
	"bytes"
	"strings"
	"sync"

	"github.com/helmstore/helmstore/internal/testing/testenv"
)

// buildOutput collects go build -v's output, counting downloaded modules
// and compiled packages.
type buildOutput struct {
	mu         sync.Mutex
	buf        bytes.Buffer
	mods, pkgs int
	partial    []byte
}

func (o *buildOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf.Write(p)
	o.partial = append(o.partial, p...)
	for {
		i := bytes.IndexByte(o.partial, '\n')
		if i < 0 {
			break
		}
		line := string(o.partial[:i])
		o.partial = o.partial[i+1:]
		switch {
		case strings.HasPrefix(line, "go: downloading "):
			o.mods++
		case isPackageLine(line):
			o.pkgs++
		}
	}
	return len(p), nil
}

func (o *buildOutput) counts() (int, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.mods, o.pkgs
}

// isPackageLine reports whether line is one of go build -v's package paths.
func isPackageLine(line string) bool {
	return line != "" && !strings.ContainsAny(line, " \t:#")
}

// errors returns the end (at most n bytes) of the output without the
// package list, which is what tells why a build failed.
func (o *buildOutput) errors(n int) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var keep []string
	s := bufio.NewScanner(bytes.NewReader(o.buf.Bytes()))
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		if !isPackageLine(s.Text()) {
			keep = append(keep, s.Text())
		}
	}
	return testenv.Tail([]byte(strings.Join(keep, "\n")), n)
}
