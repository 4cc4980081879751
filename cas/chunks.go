package cas

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/caswire"
)

// minChunkBytes is the smallest Config.ChunkBytes (a smaller one is taken
// as this). A record claiming more chunks than its recorded size holds
// pieces of minChunkBytes is damaged.
const minChunkBytes = 512

// The largest frames the protocol stores: that of a part of
// driver.MaxPartBytes, and the sealed body of a head of driver.MaxHeadBytes,
// each with room for what compression adds to bytes it cannot shrink. A
// record claiming a larger frame is damaged.
var (
	maxPartFrame = frameBound(driver.MaxPartBytes)
	maxBodyFrame = frameBound(driver.MaxHeadBytes)
)

// frameBound bounds the stored frame of raw bytes: zstd adds at most a
// few bytes per 128 KiB block to what it cannot compress, the frame its
// headers (and a head body its seal).
func frameBound(raw int64) int64 { return raw + raw/64 + 64<<10 }

// chunkSet is a frame kept in chunk objects, as the record of the object
// it belongs to describes it: Count chunks named caswire.ChunkName(owner, set, i),
// Size bytes in all. Every count and size in it was read from the store,
// so none is trusted before check.
type chunkSet struct {
	ns, owner, set string
	count          int
	// size is the frame's recorded size, -1 if none is recorded (chunks
	// named by a caller, ReadChunks).
	size int64
	// limit bounds the frame (maxPartFrame, maxBodyFrame).
	limit int64
	// names, if set, name the chunks instead of caswire.ChunkName.
	names []string
	// what the frame is, for errors ("chart part 12ab34cd").
	what string
}

// partChunks is the chunk set of the chunked part object obj.
func partChunks(obj *Object) chunkSet {
	return chunkSet{ns: obj.Namespace, owner: obj.UID, count: obj.Part.Chunks, size: obj.Part.StoredSize, limit: maxPartFrame,
		what: fmt.Sprintf("%s part object %s", kindName(obj.Kind), obj.Name)}
}

// bodyChunks is the chunk set of the chunked body cs of the head object obj.
func bodyChunks(obj *Object, cs *ChunkSet) chunkSet {
	return chunkSet{ns: obj.Namespace, owner: obj.UID, set: cs.ID, count: cs.Count, size: cs.Size, limit: maxBodyFrame,
		what: fmt.Sprintf("the body of head object %s", obj.Name)}
}

func kindName(k Kind) string {
	switch k {
	case KindHead:
		return "head"
	case KindChart:
		return "chart"
	case KindValues:
		return "values"
	case KindManifest:
		return "manifest"
	}
	return "chunk"
}

func (c chunkSet) name(i int) string {
	if c.names != nil {
		return c.names[i]
	}
	return caswire.ChunkName(c.owner, c.set, i)
}

// check returns an error wrapping driver.ErrCorrupt if the record cannot be
// true: no chunk, a frame larger than the protocol stores, or more chunks
// than the frame holds pieces of minChunkBytes.
func (c chunkSet) check() error {
	most := (c.limit + minChunkBytes - 1) / minChunkBytes
	if c.size >= 0 {
		if c.size < 1 || c.size > c.limit {
			return fmt.Errorf("%s in namespace %s: %w: it records a frame of %d bytes (at most %d are stored)", c.what, c.ns, driver.ErrCorrupt, c.size, c.limit)
		}
		most = (c.size + minChunkBytes - 1) / minChunkBytes
	}
	if c.count < 1 || int64(c.count) > most {
		return fmt.Errorf("%s in namespace %s: %w: it records %d chunks for a frame of %d bytes", c.what, c.ns, driver.ErrCorrupt, c.count, c.size)
	}
	return nil
}

// window is how many chunks are read, or deleted, at once: what is in
// flight (and in memory beyond the chunks read so far) never depends on a
// recorded count.
const window = batchNames

// readChunks reads and joins the chunks of c; nil if one is missing. The
// record is checked first, and the chunks are read window by window,
// stopping at the first window with a missing chunk, as soon as they hold
// more bytes than recorded, and when ctx ends: a count or size that claims
// more than was written costs a window of reads, never an allocation by
// the count. A store with GetMany reads each window in one call (stale
// reads), and the chunks it did not return one by one.
func (b *Backend) readChunks(ctx context.Context, c chunkSet, stale bool) ([]byte, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	br, _ := b.s.(BatchReader)
	var pieces [][]byte
	var total int64
	for start := 0; start < c.count; start += window {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		names := make([]string, min(window, c.count-start))
		for j := range names {
			names[j] = c.name(start + j)
		}
		var pre map[string]*Object
		if br != nil && stale && len(names) > 1 {
			pre, _ = br.GetMany(ctx, KindChunk, c.ns, names, ReadOptions{Stale: true})
		}
		got := make([][]byte, len(names))
		missing := false
		var mu sync.Mutex
		err := b.parallel(ctx, len(names), func(ctx context.Context, j int) error {
			obj, ok := pre[names[j]]
			if !ok {
				var err error
				obj, err = b.s.Get(ctx, Ref{Kind: KindChunk, Namespace: c.ns, Name: names[j]}, ReadOptions{Stale: stale})
				if errors.Is(err, ErrNotFound) {
					mu.Lock()
					missing = true
					mu.Unlock()
					return nil
				}
				if err != nil {
					return err
				}
			}
			if obj.Err != nil {
				return fmt.Errorf("chunk %s: %w", names[j], obj.Err)
			}
			if obj.Chunk == nil || obj.Chunk.Index != start+j {
				return fmt.Errorf("chunk %s: %w: does not hold piece %d", names[j], driver.ErrCorrupt, start+j)
			}
			got[j] = obj.Chunk.Data
			return nil
		})
		if err != nil || missing {
			return nil, err
		}
		for _, p := range got {
			total += int64(len(p))
		}
		if bound := c.limit; total > bound || c.size >= 0 && total > c.size {
			if c.size >= 0 {
				bound = c.size
			}
			return nil, fmt.Errorf("%s in namespace %s: %w: its chunks hold more than the %d bytes it records", c.what, c.ns, driver.ErrCorrupt, bound)
		}
		pieces = append(pieces, got...)
	}
	return driver.JoinChunks(pieces, c.count, c.size)
}

// deleteChunkSet removes the chunks of c, window by window, until a
// window in which none existed: chunks are written from the first, so a
// count that claims more than was written costs one window of deletes.
// What a damaged record leaves beyond is for Collect, which finds chunks
// by listing.
func (b *Backend) deleteChunkSet(ctx context.Context, c chunkSet) error {
	for start := 0; start < c.count; start += window {
		n := min(window, c.count-start)
		var mu sync.Mutex
		found := false
		err := b.parallel(ctx, n, func(ctx context.Context, j int) error {
			err := b.s.Delete(ctx, Ref{Kind: KindChunk, Namespace: c.ns, Name: c.name(start + j)}, "")
			if errors.Is(err, ErrNotFound) {
				return nil
			}
			if err == nil {
				mu.Lock()
				found = true
				mu.Unlock()
			}
			return err
		})
		if err != nil {
			return err
		}
		if !found {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}
