package cosmos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
)

// objectStore is cas.ObjectStore (and cas.ReferrerAdder) over one Cosmos DB
// container: each object one item, Version its ETag.
type objectStore struct {
	c *azcosmos.ContainerClient
	// observe, if set, sees the JSON size of every item written (tests).
	observe func(kind cas.Kind, size int)
}

var (
	_ cas.ObjectStore   = (*objectStore)(nil)
	_ cas.ReferrerAdder = (*objectStore)(nil)
	_ cas.BatchReader   = (*objectStore)(nil)
)

// newUID returns a fresh object UID: 32 hexadecimal digits (no '-', so that
// chunk names, <uid>-<i>, lead back to their owner's partition).
func newUID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func describe(ref cas.Ref) string {
	return fmt.Sprintf("%s %s in namespace %s", kindName(ref.Kind), ref.Name, ref.Namespace)
}

// encode marshals it, refusing an item over MaxItemBytes.
func (s *objectStore) encode(ref cas.Ref, it *item) ([]byte, error) {
	b, err := json.Marshal(it)
	if err != nil {
		return nil, err
	}
	if s.observe != nil {
		s.observe(ref.Kind, len(b))
	}
	if len(b) > MaxItemBytes {
		return nil, fmt.Errorf("cosmos: %s would be a %d-byte item, over the %d bytes Cosmos DB accepts (labels too large?)", describe(ref), len(b), MaxItemBytes)
	}
	return b, nil
}

// Create implements cas.ObjectStore.
func (s *objectStore) Create(ctx context.Context, obj *cas.Object) (*cas.Object, error) {
	it := toItem(obj)
	it.UID, it.Created = newUID(), time.Now().UnixMilli()
	body, err := s.encode(obj.Ref(), it)
	if err != nil {
		return nil, err
	}
	resp, err := s.c.CreateItem(ctx, azcosmos.NewPartitionKeyString(it.PK), body, nil)
	if err != nil {
		return nil, mapError("create", describe(obj.Ref()), err)
	}
	out := *obj
	out.UID, out.Version, out.Created = it.UID, string(resp.ETag), time.UnixMilli(it.Created)
	out.StoredBytes = int64(len(body))
	return &out, nil
}

// Get implements cas.ObjectStore. Cosmos DB has no cache to read from:
// ReadOptions are ignored (a point read costs the same either way).
func (s *objectStore) Get(ctx context.Context, ref cas.Ref, _ cas.ReadOptions) (*cas.Object, error) {
	resp, err := s.c.ReadItem(ctx, azcosmos.NewPartitionKeyString(partitionKey(ref)), itemID(ref.Name), nil)
	if err != nil {
		return nil, mapError("read", describe(ref), err)
	}
	return decode(ref, resp.Value, false), nil
}

// GetMany implements cas.BatchReader with one query for the items of kind
// k in namespace ns named among names: within one partition when they all
// share it (the chunks of one frame), across partitions otherwise (parts
// are one partition each).
func (s *objectStore) GetMany(ctx context.Context, k cas.Kind, ns string, names []string, _ cas.ReadOptions) (map[string]*cas.Object, error) {
	if len(names) == 0 {
		return nil, nil
	}
	want := make(map[string]bool, len(names))
	first := partitionKey(cas.Ref{Kind: k, Namespace: ns, Name: names[0]})
	one := true
	for _, n := range names {
		want[n] = true
		one = one && partitionKey(cas.Ref{Kind: k, Namespace: ns, Name: n}) == first
	}
	pk := azcosmos.NewPartitionKey() // cross-partition
	if one {
		pk = azcosmos.NewPartitionKeyString(first)
	}
	query := "SELECT * FROM c WHERE c.k = @k AND c.ns = @ns AND ARRAY_CONTAINS(@names, c.n)"
	params := []azcosmos.QueryParameter{{Name: "@k", Value: kindName(k)}, {Name: "@ns", Value: ns}, {Name: "@names", Value: names}}
	pager := s.c.NewQueryItemsPager(query, pk, &azcosmos.QueryOptions{QueryParameters: params})
	out := make(map[string]*cas.Object, len(names))
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, mapError("query", kindName(k)+" objects", err)
		}
		for _, b := range page.Items {
			it, err := readItem(b)
			if err != nil || !want[it.Name] {
				continue // read one by one: Get reports what is wrong with it
			}
			out[it.Name] = objectOf(cas.Ref{Kind: k, Namespace: ns, Name: it.Name}, b, it, nil, false)
		}
	}
	return out, nil
}

// decode reads an item of the object ref names.
func decode(ref cas.Ref, b []byte, meta bool) *cas.Object {
	it, err := readItem(b)
	return objectOf(ref, b, it, err, meta)
}

// objectOf returns the object of the item it, read from b (or the error
// reading it, as a damaged object).
func objectOf(ref cas.Ref, b []byte, it *item, err error, meta bool) *cas.Object {
	if err != nil {
		return &cas.Object{Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name, Labels: map[string]string{},
			Err: fmt.Errorf("cosmos item of %s: %w: %v", describe(ref), driver.ErrCorrupt, err)}
	}
	obj := it.object(ref, meta)
	obj.StoredBytes = int64(len(b))
	return obj
}

// Replace implements cas.ObjectStore.
func (s *objectStore) Replace(ctx context.Context, obj *cas.Object) (*cas.Object, error) {
	if obj.Version == "" || obj.UID == "" {
		return nil, fmt.Errorf("cosmos replace %s: no version or UID to replace at", describe(obj.Ref()))
	}
	it := toItem(obj)
	body, err := s.encode(obj.Ref(), it)
	if err != nil {
		return nil, err
	}
	etag := azcore.ETag(obj.Version)
	resp, err := s.c.ReplaceItem(ctx, azcosmos.NewPartitionKeyString(it.PK), it.ID, body, &azcosmos.ItemOptions{IfMatchEtag: &etag})
	if err != nil {
		return nil, mapError("replace", describe(obj.Ref()), err)
	}
	out := *obj
	out.Version = string(resp.ETag)
	out.StoredBytes = int64(len(body))
	return &out, nil
}

// Delete implements cas.ObjectStore.
func (s *objectStore) Delete(ctx context.Context, ref cas.Ref, version string) error {
	var o *azcosmos.ItemOptions
	if version != "" {
		etag := azcore.ETag(version)
		o = &azcosmos.ItemOptions{IfMatchEtag: &etag}
	}
	_, err := s.c.DeleteItem(ctx, azcosmos.NewPartitionKeyString(partitionKey(ref)), itemID(ref.Name), o)
	return mapError("delete", describe(ref), err)
}

// safeUID is what a referrer UID must look like to be written into a patch
// condition (the protocol's UIDs are this store's hexadecimal ones).
var safeUID = regexp.MustCompile(`^[0-9a-f-]{1,100}$`)

// AddReferrer implements cas.ReferrerAdder with one conditional patch: add
// r to /r and its UID to /ru unless /ru holds it already, returning the
// item as patched. If it was there already, the item is read; if the item
// does not take the patch (HTTP 400: /r or /ru is not a list), the error
// wraps errors.ErrUnsupported, so that the protocol reads the item (and
// finds it damaged).
func (s *objectStore) AddReferrer(ctx context.Context, ref cas.Ref, r cas.Referrer) (*cas.Object, error) {
	if !safeUID.MatchString(r.UID) {
		return nil, fmt.Errorf("cosmos: referrer UID %q cannot go into a patch condition: %w", r.UID, errors.ErrUnsupported)
	}
	var ops azcosmos.PatchOperations
	ops.AppendAdd("/r/-", itemRef{Kind: r.Kind, Name: r.Name, UID: r.UID})
	ops.AppendAdd("/ru/-", r.UID)
	ops.SetCondition("from c where NOT ARRAY_CONTAINS(c.ru, '" + r.UID + "')")
	resp, err := s.c.PatchItem(ctx, azcosmos.NewPartitionKeyString(partitionKey(ref)), itemID(ref.Name), ops,
		&azcosmos.ItemOptions{EnableContentResponseOnWrite: true})
	switch code, _ := statusOf(err); code {
	case 412:
		// The condition failed: r is a referrer already.
		return s.Get(ctx, ref, cas.ReadOptions{})
	case 400:
		// The item does not take the patch (its referrer list is not a
		// list): the protocol reads it, and finds it damaged.
		return nil, fmt.Errorf("cosmos: add a referrer to %s: %w: %w", describe(ref), errors.ErrUnsupported, err)
	}
	if err != nil {
		return nil, mapError("add a referrer to", describe(ref), err)
	}
	if len(resp.Value) == 0 {
		return s.Get(ctx, ref, cas.ReadOptions{})
	}
	obj := decode(ref, resp.Value, false)
	if obj.Version == "" {
		obj.Version = string(resp.ETag)
	}
	return obj, nil
}

// metaFields are the fields a metadata-only list reads.
const metaFields = "c.id, c.pk, c.k, c.ns, c.n, c.uid, c.cr, c.l, c.r, c._etag"

// List implements cas.ObjectStore with one SQL query (paged): a
// single-partition query for the heads of one release (Helm's History and
// Deployed), a cross-partition one otherwise, filtered on the indexed kind,
// namespace, name and labels.
func (s *objectStore) List(ctx context.Context, sel cas.Selector) ([]*cas.Object, error) {
	fields := "*"
	if sel.Meta {
		fields = metaFields
	}
	where := []string{"c.k = @k"}
	params := []azcosmos.QueryParameter{{Name: "@k", Value: kindName(sel.Kind)}}
	add := func(cond string, v any) {
		p := "@p" + strconv.Itoa(len(params))
		where = append(where, strings.ReplaceAll(cond, "@v", p))
		params = append(params, azcosmos.QueryParameter{Name: p, Value: v})
	}
	if sel.Namespace != "" {
		add("c.ns = @v", sel.Namespace)
	}
	if sel.Name != "" {
		add("c.n = @v", sel.Name)
	}
	keys := make([]string, 0, len(sel.Labels))
	for k := range sel.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		add("ARRAY_CONTAINS(c.lkv, @v)", labelKV(k, sel.Labels[k]))
	}
	for _, k := range sel.Has {
		add("ARRAY_CONTAINS(c.lk, @v)", k)
	}
	pk := azcosmos.NewPartitionKey() // cross-partition
	if name := sel.Labels[driver.LabelName]; sel.Kind == cas.KindHead && sel.Namespace != "" && name != "" {
		pk = azcosmos.NewPartitionKeyString(headPartition(sel.Namespace, name))
	}
	query := "SELECT " + fields + " FROM c WHERE " + strings.Join(where, " AND ")
	pager := s.c.NewQueryItemsPager(query, pk, &azcosmos.QueryOptions{QueryParameters: params})
	var out []*cas.Object
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, mapError("query", kindName(sel.Kind)+" objects", err)
		}
		for _, b := range page.Items {
			it, err := readItem(b)
			ref := cas.Ref{Kind: sel.Kind, Namespace: it.NS, Name: it.Name}
			out = append(out, objectOf(ref, b, it, err, sel.Meta))
		}
	}
	return out, nil
}
