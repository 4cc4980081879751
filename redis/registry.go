package redis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	goredis "github.com/redis/go-redis/v9"
)

// The namespace registry says which namespaces may hold releases, for reads
// across namespaces. Every write of a head adds its namespace in the same
// script, so the registry holds a namespace whenever the namespace holds
// heads, whatever the server lost: a key of the registry lives on the same
// server as the heads it speaks for, and data lost takes both (the next
// write restores both).
//
// On one server (standalone, Sentinel) the registry is one set,
// <prefix>:namespaces. In Cluster a set can only be written by a script on
// its own slot, and a primary can lose its data alone; so the registry is
// one set per slot, <prefix>:{<tag>}:namespaces with a tag of that slot
// (slotTags), holding the namespaces of that slot. A read across
// namespaces reads the sets that exist, found by a scan of the primaries
// when they hold few keys and no slot moved meanwhile (scanRegistries),
// else all 16384 with one script per primary (registryScript), and where a
// primary did not have one of them (its slot moved or is being moved),
// that one on its own through the Cluster client, which follows the
// redirects. Where a key of the registry is not a set (damage), or the
// registry names no namespace at all (a store that holds nothing, or whose
// registry was deleted alone), the namespaces are found by scanning for
// their sets of releases instead: a registry lost or damaged never reads
// as "no releases".
//
// Who may change it: the store's own user, and the users of NamespaceACL,
// who may only add to it (SADD, in an ACL selector), never remove, delete,
// rename or replace it: a user confined to one namespace cannot hide
// another from the readers of every namespace. What it adds that is not a
// namespace name (isNamespace) is ignored, and a name that is one but
// holds no releases costs a read and shows nothing.

// registryKey is the key of the registry that holds ns.
func (b *redisBackend) registryKey(ns string) string {
	if !b.cluster {
		return b.k.namespaces()
	}
	return b.k.slotRegistry(keySlot(b.k.all(ns)))
}

// registryScript returns the members of the registries of some slots,
// ARGV[1] .. ":{" .. tag .. "}:namespaces" for each tag in ARGV[2] (comma
// separated: one argument is much cheaper to send than thousands), and the
// positions (from 1) of those it could not read: on another node (a slot
// that moved, or that is being moved and whose key is gone or not yet
// there) or of the wrong type. A script may read keys of many slots only
// undeclared, on its own node, and with allow-cross-slot-keys (Redis 7).
var registryScript = goredis.NewScript(`#!lua flags=no-writes,allow-cross-slot-keys
local prefix = ARGV[1]
local out, bad = {}, {}
local i = 0
for tag in string.gmatch(ARGV[2], '[^,]+') do
  i = i + 1
  local r = redis.pcall('SMEMBERS', prefix .. ':{' .. tag .. '}:namespaces')
  if r['err'] then
    bad[#bad + 1] = i
  else
    for _, m in ipairs(r) do out[#out + 1] = m end
  end
end
return {out, bad}
`)

// namespaces returns ns, or for "" every namespace that may hold releases,
// sorted: the registry's members that are namespace names (isNamespace);
// or, where the registry names none (a store that holds nothing, or whose
// registry was lost alone) or a key of it is not a set, the namespaces
// whose set of releases exists, found by scanning (every primary). So a
// registry deleted or damaged never reads as no releases.
func (b *redisBackend) namespaces(ctx context.Context, ns string) ([]string, error) {
	if ns != "" {
		return []string{ns}, nil
	}
	var nss []string
	var err error
	if b.cluster {
		nss, err = b.clusterNamespaces(ctx)
		if err == nil {
			var legacy []string
			legacy, err = b.legacyRegistry(ctx)
			nss = append(nss, legacy...)
		}
	} else {
		err = b.again(ctx, func() (err error) {
			nss, err = b.c.SMembers(ctx, b.k.namespaces()).Result()
			return err
		})
	}
	if err == nil {
		if nss = slices.DeleteFunc(nss, func(n string) bool { return !isNamespace(n) }); len(nss) > 0 {
			return sortedUnique(nss), nil
		}
	} else if isWrongType(err) {
		b.log("helmstore: redis: a key of the namespace registry is not a set (%v): finding namespaces by scanning", err)
	} else {
		return nil, err
	}
	keys, err := b.scan(ctx, "", b.k.allPattern(), "set")
	if err != nil {
		return nil, err
	}
	nss = nss[:0]
	for _, k := range keys {
		if n, ok := b.k.namespaceOfAll(k); ok {
			nss = append(nss, n)
		}
	}
	return sortedUnique(nss), nil
}

// legacyRegistry returns the members of <prefix>:namespaces in Cluster,
// where releases stored before the registry was kept per slot registered
// their namespace (one set for the whole Cluster): a namespace no write
// has touched since is found there. Nothing writes the set in Cluster
// now; its members whose releases are all gone are empty namespaces,
// which cost a read each. A set that is missing or of the wrong type (not
// the registry of an older version) is left alone.
func (b *redisBackend) legacyRegistry(ctx context.Context) ([]string, error) {
	var nss []string
	err := b.again(ctx, func() (err error) {
		nss, err = b.c.SMembers(ctx, b.k.namespaces()).Result()
		return err
	})
	if isWrongType(err) {
		return nil, nil
	}
	return nss, err
}

func sortedUnique(ss []string) []string {
	sort.Strings(ss)
	out := ss[:0]
	for i, s := range ss {
		if i == 0 || s != ss[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// clusterNamespaces returns the namespaces of a Cluster: the members of the
// registry's sets, found by scanning the primaries when that is cheaper
// and no slot moved meanwhile (scanRegistries), else read slot by slot.
func (b *redisBackend) clusterNamespaces(ctx context.Context) ([]string, error) {
	ctx = b.logged(ctx)
	cc, ok := b.c.(*goredis.ClusterClient)
	if !ok {
		return nil, fmt.Errorf("unexpected client %T", b.c)
	}
	var owners map[*goredis.Client][]int
	var rest []int
	err := b.again(ctx, func() (err error) {
		owners, rest, err = b.slotOwners(ctx, cc)
		return err
	})
	if err != nil {
		return nil, err
	}
	if regs, ok := b.scanRegistries(ctx, owners); ok {
		return b.readRegistries(ctx, nil, regs)
	}
	return b.slotRegistries(ctx, owners, rest)
}

// slotOwners returns the slots each primary serves (CLUSTER SHARDS, each
// range's primary's client as go-redis knows it), and the slots none does.
func (b *redisBackend) slotOwners(ctx context.Context, cc *goredis.ClusterClient) (map[*goredis.Client][]int, []int, error) {
	shards, err := cc.ClusterShards(ctx).Result()
	if err != nil {
		return nil, nil, err
	}
	owners := map[*goredis.Client][]int{}
	var covered [clusterSlots]bool
	for _, sh := range shards {
		for _, r := range sh.Slots {
			if r.Start < 0 || r.End >= clusterSlots || r.Start > r.End {
				continue
			}
			m, err := cc.MasterForKey(ctx, b.k.slotRegistry(int(r.Start)))
			if err != nil {
				return nil, nil, err
			}
			for s := int(r.Start); s <= int(r.End); s++ {
				if !covered[s] {
					covered[s] = true
					owners[m] = append(owners[m], s)
				}
			}
		}
	}
	var rest []int
	for s, c := range covered {
		if !c {
			rest = append(rest, s)
		}
	}
	return owners, rest, nil
}

// slotRegistries returns the members of every slot's registry: a script on
// each primary for the slots it serves (owners), then the registries the
// scripts could not read and those of the slots in rest, one by one
// through the Cluster client. It fails with WRONGTYPE if one is not a set.
func (b *redisBackend) slotRegistries(ctx context.Context, owners map[*goredis.Client][]int, rest []int) ([]string, error) {
	var mu sync.Mutex
	var nss []string
	var wg sync.WaitGroup
	for m, slots := range owners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, bad, err := b.registryOn(ctx, m, slots)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				rest = append(rest, slots...)
				return
			}
			nss = append(nss, got...)
			rest = append(rest, bad...)
		}()
	}
	wg.Wait()
	regs := make([]string, len(rest))
	for i, slot := range rest {
		regs[i] = b.k.slotRegistry(slot)
	}
	return b.readRegistries(ctx, nss, regs)
}

// readRegistries returns nss and the members of the sets regs, read through
// the Cluster client (which follows redirects). It fails with WRONGTYPE if
// one is not a set.
func (b *redisBackend) readRegistries(ctx context.Context, nss, regs []string) ([]string, error) {
	if len(regs) == 0 {
		return nss, nil
	}
	cmds := make([]*goredis.StringSliceCmd, len(regs))
	err := b.again(ctx, func() error {
		pipe := b.c.Pipeline()
		for i, k := range regs {
			cmds[i] = pipe.SMembers(ctx, k)
		}
		_, _ = pipe.Exec(ctx)
		return firstError(cmds)
	})
	if err != nil {
		return nil, err
	}
	for i, c := range cmds {
		got, err := c.Result()
		if isWrongType(err) {
			return nil, fmt.Errorf("%s: %w", regs[i], err)
		}
		nss = append(nss, got...)
	}
	return nss, nil
}

// registryOn runs registryScript on the primary m for slots, returning the
// members and the slots whose registry it could not read. A script the
// server refuses (rather than a failure to reach it) is logged once: the
// registries are then read one by one, which is slower.
func (b *redisBackend) registryOn(ctx context.Context, m *goredis.Client, slots []int) (nss []string, bad []int, err error) {
	tags := slotTags()
	var list strings.Builder
	list.Grow(8 * len(slots))
	for i, s := range slots {
		if i > 0 {
			list.WriteByte(',')
		}
		list.WriteString(tags[s])
	}
	reply, err := registryScript.Run(ctx, m, nil, b.k.prefix, list.String()).Slice()
	if err != nil {
		if !isTransport(err) && !transient(err) && b.scriptRefused.CompareAndSwap(false, true) {
			b.log("helmstore: redis: reading the namespace registry with a script on %s failed (%v): reading its keys one by one", m.Options().Addr, err)
		}
		return nil, nil, err
	}
	unexpected := errors.New("unexpected reply from the registry script")
	if len(reply) != 2 {
		return nil, nil, unexpected
	}
	members, ok1 := reply[0].([]interface{})
	positions, ok2 := reply[1].([]interface{})
	if !ok1 || !ok2 {
		return nil, nil, unexpected
	}
	for _, v := range members {
		if s, ok := v.(string); ok {
			nss = append(nss, s)
		}
	}
	for _, v := range positions {
		i, ok := v.(int64)
		if !ok || i < 1 || int(i) > len(slots) {
			return nil, nil, unexpected
		}
		bad = append(bad, slots[i-1])
	}
	return nss, bad, nil
}
