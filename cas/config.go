package cas

import "time"

// Config tunes the protocol for a store. The zero value of a field takes
// the default named in its comment.
type Config struct {
	// InlinePartBytes is the largest part frame kept inside its part
	// object; larger frames go to chunk objects (default 8 KiB: adding a
	// referrer rewrites the part object, so it stays small).
	InlinePartBytes int
	// EmbedBytes is the most part frame bytes a head object holds itself
	// (HeadRecord.Embedded) instead of in part objects: the deltas of its
	// values and manifest, and full parts of at most EmbedSmallBytes, that
	// this revision adds (default 32 KiB; negative: none). Each embedded
	// part saves a create (or a referrer added) on write and a read on a
	// cold read, and costs its bytes again in every revision holding it.
	EmbedBytes int
	// InlineBodyBytes is the largest head body frame kept inside the head
	// object (default 384 KiB).
	InlineBodyBytes int
	// ChunkBytes is the most frame bytes one chunk object holds (default
	// 600 KiB, about 800 KiB in base64 JSON; at least 512 bytes).
	ChunkBytes int
	// PendingTimeout is the longest a Create works on its pending head:
	// its pending window (LabelPendingUntil) ends this long after it
	// starts, or at its context's deadline if that is sooner (default 10
	// minutes). A head still pending this long after Object.Created is
	// abandoned whatever its labels say (this process's clock against
	// the store's).
	PendingTimeout time.Duration
	// ClockSkew is how far apart the clocks of the processes sharing the
	// store may be (default 10 seconds): a head still pending is
	// abandoned ClockSkew after its pending window ended, by the clock of
	// the process that finds it. A clock further off than that could take
	// a live writer's head for abandoned.
	ClockSkew time.Duration
	// CleanupTimeout bounds the rollbacks, background commits and
	// cleanups that run on after the caller's context ended (default 2
	// minutes).
	CleanupTimeout time.Duration
	// CloseTimeout bounds how long Close waits for the background work
	// still running (commits; default 2 minutes, as
	// driver.DefaultTimeout): a backend sets it to the store's operation
	// timeout. What is unfinished then is stopped, said in the log, and
	// left for later cleanups and Collect.
	CloseTimeout time.Duration
	// Retry is the policy of every compare-and-swap loop.
	Retry Retry
	// Clock is the time the protocol goes by: pending windows, the age
	// of pending heads, and the waits between retries (nil: the system's
	// clock; see Clock for what another must keep to).
	Clock Clock
	// Workers bounds the store calls one operation has in flight
	// (default 8).
	Workers int
	// Log receives what the protocol could not settle and left for later
	// (Helm's DebugLog signature); nil discards it.
	Log func(format string, v ...interface{})
	// HeadName returns the name of the head object stored under a release
	// key (default: the key itself). A store that limits names more
	// than keys are limited maps long keys to hashes, say; the key is also kept in
	// the head record and checked on read.
	HeadName func(key string) string
	// Persistent reports whether an error of the store will recur on
	// every call until an operator acts (missing rights): Delete reports
	// such an error from its cleanup, instead of logging it and leaving
	// the cleanup for later. Nil: none is.
	Persistent func(error) bool
}

// Defaults of Config.
const (
	DefaultInlinePartBytes = 8 << 10
	DefaultEmbedBytes      = 32 << 10
	DefaultInlineBodyBytes = 384 << 10
	DefaultChunkBytes      = 600 << 10
	DefaultPendingTimeout  = 10 * time.Minute
	DefaultClockSkew       = 10 * time.Second
	DefaultCleanupTimeout  = 2 * time.Minute
	DefaultCloseTimeout    = 2 * time.Minute
	DefaultWorkers         = 8
)

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.InlinePartBytes, DefaultInlinePartBytes)
	switch {
	case c.EmbedBytes == 0:
		c.EmbedBytes = DefaultEmbedBytes
	case c.EmbedBytes < 0:
		c.EmbedBytes = 0
	}
	def(&c.InlineBodyBytes, DefaultInlineBodyBytes)
	def(&c.ChunkBytes, DefaultChunkBytes)
	c.ChunkBytes = max(c.ChunkBytes, minChunkBytes)
	def(&c.Workers, DefaultWorkers)
	if c.PendingTimeout <= 0 {
		c.PendingTimeout = DefaultPendingTimeout
	}
	if c.ClockSkew <= 0 {
		c.ClockSkew = DefaultClockSkew
	}
	if c.CleanupTimeout <= 0 {
		c.CleanupTimeout = DefaultCleanupTimeout
	}
	if c.CloseTimeout <= 0 {
		c.CloseTimeout = DefaultCloseTimeout
	}
	if c.Log == nil {
		c.Log = func(string, ...interface{}) {}
	}
	if c.HeadName == nil {
		c.HeadName = func(key string) string { return key }
	}
	if c.Clock == nil {
		c.Clock = systemClock{}
	}
	c.Retry = c.Retry.withDefaults()
	return c
}
