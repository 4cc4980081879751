package kubebuild

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// A tool is a module under tools/ whose commands are built, once, into a
// cache directory keyed by the module's content.
type tool struct {
	name     string   // its directory under tools/, and its cache directory's prefix
	module   string   // the module it requires whose commands it builds
	packages []string // the commands' packages
	bins     []string // the binaries they make, one per package
	what     string   // the binaries, for messages
	env      string   // the variable that names prebuilt binaries instead
	cold     string   // how long a build from an empty Go build cache takes
	// ldflags returns go build's -ldflags for the module's version; nil: none.
	ldflags func(version string) string
}

var etcdTool = &tool{
	name:     "etcd",
	module:   "go.etcd.io/etcd/server/v3",
	packages: []string{"go.etcd.io/etcd/server/v3"},
	bins:     []string{Etcd},
	what:     Etcd,
	env:      EtcdEnv,
	cold:     "about a minute on 2 cores, plus module downloads on a first run",
}

var kubeTool = &tool{
	name:     "kube",
	module:   "k8s.io/kubernetes",
	packages: []string{"k8s.io/kubernetes/cmd/" + APIServer, "k8s.io/kubernetes/cmd/" + ControllerManager},
	bins:     []string{APIServer, ControllerManager},
	what:     APIServer + " and " + ControllerManager,
	env:      BinDirEnv,
	cold:     "about 7-10 minutes on 2 cores, plus module downloads on a first run",
	ldflags:  kubeLDFlags,
}

// A build is where a tool's binaries are, or will be built, and how.
type build struct {
	*tool
	src     string // the tools/<name> directory
	version string // of tool.module
	ldflags string
	dir     string // the cache directory
}

// locate returns where t's binaries are or will be built, and how.
func (t *tool) locate() (build, error) {
	src, err := t.findSource()
	if err != nil {
		return build{}, err
	}
	gomod := filepath.Join(src, "go.mod")
	version, err := requiredVersion(gomod, t.module)
	if err != nil {
		return build{}, err
	}
	ldflags := ""
	if t.ldflags != nil {
		ldflags = t.ldflags(version)
	}
	key, err := hashFiles(ldflags, gomod, filepath.Join(src, "go.sum"), filepath.Join(src, "tools.go"))
	if err != nil {
		return build{}, err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return build{}, fmt.Errorf("no cache directory to build %s in: set HOME, or %s to prebuilt binaries: %w", t.what, t.env, err)
	}
	dir := filepath.Join(cache, "helmstore", t.name+"-"+key)
	return build{tool: t, src: src, version: version, ldflags: ldflags, dir: dir}, nil
}

// have reports whether b's cache directory holds its binaries, executable.
func (b build) have() bool {
	for _, n := range b.bins {
		if !executable(filepath.Join(b.dir, n)) {
			return false
		}
	}
	return true
}

// findSource returns the tools/<name> directory of this repository: found
// from the working directory upwards (a test runs in its package's
// directory), else from this source file's directory upwards.
func (t *tool) findSource() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		starts = append(starts, filepath.Dir(file))
	}
	for _, dir := range starts {
		for {
			cand := filepath.Join(dir, "tools", t.name)
			if b, err := os.ReadFile(filepath.Join(cand, "go.mod")); err == nil && bytes.Contains(b, []byte(t.module)) {
				return cand, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("cannot find the tools/%s module: run from inside the helmstore repository, or set %s to prebuilt binaries", t.name, t.env)
}

// requiredVersion reads go.mod's requirement of module.
func requiredVersion(gomod, module string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		for i := 0; i+1 < len(fields); i++ {
			if fields[i] == module && strings.HasPrefix(fields[i+1], "v") {
				return fields[i+1], nil
			}
		}
	}
	return "", fmt.Errorf("%s does not require %s", gomod, module)
}

// hashFiles is a cache key: of salt, the platform, and the files' names
// and contents.
func hashFiles(salt string, paths ...string) (string, error) {
	h := sha256.New()
	h.Write([]byte(salt))
	h.Write([]byte(runtime.GOOS + "/" + runtime.GOARCH))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "\x00%s\x00%d\x00", filepath.Base(p), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// kubeLDFlags stamps the version the API server reports (/version), which
// Helm reads for chart kubeVersion checks. Only the link step depends on it,
// so it does not cost a rebuild of the Go build cache.
func kubeLDFlags(version string) string {
	v := strings.TrimPrefix(version, "v")
	parts := strings.SplitN(v, ".", 3)
	major, minor := "1", "0"
	if len(parts) >= 2 {
		major, minor = parts[0], parts[1]
	}
	pkg := "k8s.io/component-base/version"
	return strings.Join([]string{
		"-X", pkg + ".gitVersion=" + version,
		"-X", pkg + ".gitMajor=" + major,
		"-X", pkg + ".gitMinor=" + minor,
		"-X", pkg + ".gitTreeState=clean",
	}, " ")
}
