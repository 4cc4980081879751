package redis

import (
	"context"
	"strconv"
	"strings"
	"sync"

	goredis "github.com/redis/go-redis/v9"
)

// scanKeysMax is the most keys the primaries of a Cluster may hold together
// for a read across namespaces to find the registry's keys by scanning
// them rather than read every slot's: that read makes 16384 server calls
// (one per slot) whatever the Cluster holds, a scan about one per key it
// visits. A variable for tests (export_test.go).
var scanKeysMax int64 = 1 << 15

// scanRegistries finds the keys of the registry (one set per slot that has
// namespaces) by scanning the primaries, and reports whether it could
// trust what it found. A scan of several primaries misses a key that
// moves from one not yet scanned to one already scanned, so it checks
// every primary's own view of its slots (CLUSTER NODES) before and after:
// the scan is trusted only if the views are the same, no slot was being
// moved, the primaries' slots cover every slot, and they hold at most
// scanKeysMax keys. A key moves only while its slot is being moved, which
// the views show, and a move finished meanwhile changes them. Otherwise,
// or on any error, the caller reads every slot's registry.
func (b *redisBackend) scanRegistries(ctx context.Context, owners map[*goredis.Client][]int) ([]string, bool) {
	masters := make([]*goredis.Client, 0, len(owners))
	for m := range owners {
		masters = append(masters, m)
	}
	before, keys, err := nodeViews(ctx, masters)
	if err != nil || keys > scanKeysMax || !covering(before) {
		return nil, false
	}
	var mu sync.Mutex
	var found []string
	var failed bool
	var wg sync.WaitGroup
	pattern := globEscape(b.k.prefix) + ":{_*}:namespaces"
	for _, m := range masters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := scanNode(ctx, m, pattern, "")
			mu.Lock()
			defer mu.Unlock()
			failed = failed || err != nil
			found = append(found, got...)
		}()
	}
	wg.Wait()
	if failed {
		return nil, false
	}
	after, _, err := nodeViews(ctx, masters)
	if err != nil {
		return nil, false
	}
	for i := range before {
		if before[i] != after[i] {
			return nil, false
		}
	}
	regs := []string{}
	for _, k := range found {
		if k == b.k.slotRegistry(keySlot(k)) {
			regs = append(regs, k)
		}
	}
	return regs, true
}

// nodeView is a primary's view of itself: its ID and its slots as CLUSTER
// NODES shows them (ranges, and any slot being moved in brackets), or ""
// if it does not say it is a primary.
type nodeView string

// nodeViews returns the view of each of masters (in order) and the number
// of keys they hold together (DBSIZE).
func nodeViews(ctx context.Context, masters []*goredis.Client) ([]nodeView, int64, error) {
	views := make([]nodeView, len(masters))
	sizes := make([]int64, len(masters))
	errs := make([]error, len(masters))
	var wg sync.WaitGroup
	for i, m := range masters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var size *goredis.IntCmd
			var nodes *goredis.StringCmd
			_, errs[i] = m.Pipelined(ctx, func(p goredis.Pipeliner) error {
				size = p.DBSize(ctx)
				nodes = p.ClusterNodes(ctx)
				return nil
			})
			if errs[i] == nil {
				sizes[i] = size.Val()
				views[i] = selfView(nodes.Val())
			}
		}()
	}
	wg.Wait()
	var total int64
	for i := range masters {
		if errs[i] != nil {
			return nil, 0, errs[i]
		}
		total += sizes[i]
	}
	return views, total, nil
}

// selfView returns the view of the node in its CLUSTER NODES reply: the
// line flagged myself (<id> <addr> <flags> <primary> <ping-sent>
// <pong-recv> <config-epoch> <link-state> <slot>...).
func selfView(nodes string) nodeView {
	for _, line := range strings.Split(nodes, "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || !hasFlag(f[2], "myself") {
			continue
		}
		if !hasFlag(f[2], "master") {
			return ""
		}
		return nodeView(f[0] + " " + strings.Join(f[8:], " "))
	}
	return ""
}

func hasFlag(flags, flag string) bool {
	for _, f := range strings.Split(flags, ",") {
		if f == flag {
			return true
		}
	}
	return false
}

// covering reports whether views are of primaries, none moving a slot,
// that serve every slot exactly once.
func covering(views []nodeView) bool {
	var seen [clusterSlots]bool
	n := 0
	for _, v := range views {
		f := strings.Fields(string(v))
		if len(f) == 0 {
			return false
		}
		for _, r := range f[1:] {
			lo, hi, ok := strings.Cut(r, "-")
			if !ok {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			z, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil || a < 0 || a > z || z >= clusterSlots { // a slot being moved ("[...]") too
				return false
			}
			for s := a; s <= z; s++ {
				if seen[s] {
					return false
				}
				seen[s] = true
				n++
			}
		}
	}
	return n == clusterSlots
}
