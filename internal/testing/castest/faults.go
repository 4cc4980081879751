package castest

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/helmstore/helmstore/cas"
)

// Call names an ObjectStore method.
type Call uint8

// The calls a Store answers.
const (
	CallCreate Call = iota + 1
	CallGet
	CallReplace
	CallDelete
	CallList
	CallAddReferrer
)

var callNames = [...]string{CallCreate: "create", CallGet: "get", CallReplace: "replace", CallDelete: "delete", CallList: "list", CallAddReferrer: "addReferrer"}

// String returns the call's name ("create", "get", ...).
func (c Call) String() string {
	if int(c) < len(callNames) && callNames[c] != "" {
		return callNames[c]
	}
	return "call(" + strconv.Itoa(int(c)) + ")"
}

// IsWrite reports whether c changes the store (Create, Replace, Delete,
// AddReferrer).
func (c Call) IsWrite() bool {
	return c == CallCreate || c == CallReplace || c == CallDelete || c == CallAddReferrer
}

// Op describes one call a process makes, for a Plan to decide its fate.
type Op struct {
	Call Call
	// Ref names the object (for List: its kind and namespace, and the
	// name if the selector has one).
	Ref cas.Ref
	// Seq numbers the process's calls from 0, reads and writes alike.
	Seq int
	// Write numbers the process's writes from 0; -1 for a read.
	Write int
	// Stale is set on a Get that allows a stale answer
	// (cas.ReadOptions.Stale).
	Stale bool
}

// String describes op, e.g. "#3 write 1: replace values/ns/abc".
func (op Op) String() string {
	w := ""
	if op.Write >= 0 {
		w = " write " + strconv.Itoa(op.Write)
	}
	return fmt.Sprintf("#%d%s: %s %s", op.Seq, w, op.Call, RefString(op.Ref))
}

// RefString formats ref as kind/namespace/name.
func RefString(ref cas.Ref) string {
	return KindName(ref.Kind) + "/" + ref.Namespace + "/" + ref.Name
}

// KindName returns a short name for k ("head", "chart", ...).
func KindName(k cas.Kind) string {
	switch k {
	case cas.KindHead:
		return "head"
	case cas.KindChart:
		return "chart"
	case cas.KindValues:
		return "values"
	case cas.KindManifest:
		return "manifest"
	case cas.KindChunk:
		return "chunk"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Fault is what a Plan makes of one call.
type Fault uint8

// The faults a Plan can inject.
const (
	// None: the call runs normally.
	None Fault = iota
	// Fail: nothing is applied, and the call returns an error wrapping
	// ErrUnavailable (a request the service refused or never got).
	Fail
	// LoseAnswer: a write is applied, but the call returns an error
	// wrapping ErrUnavailable and ErrAnswerLost (a timeout after the
	// service acted). On a read it is Fail.
	LoseAnswer
	// Crash: the process dies before the call: nothing is applied, and
	// this call and every later one of the process fail with ErrCrashed.
	Crash
	// CrashAfter: the call is applied, then the process dies before the
	// answer arrives: this call and every later one fail with ErrCrashed.
	// On a read it is Crash.
	CrashAfter
	// Stale: a Get that allows a stale answer (ReadOptions.Stale) is
	// answered from an out-of-date cache: the version before the
	// object's last write, or ErrNotFound if it had none. On any other
	// call it is None.
	Stale
)

var faultNames = [...]string{None: "none", Fail: "fail", LoseAnswer: "lose-answer", Crash: "crash", CrashAfter: "crash-after", Stale: "stale"}

// String returns the fault's name ("fail", "crash", ...).
func (f Fault) String() string {
	if int(f) < len(faultNames) {
		return faultNames[f]
	}
	return "fault(" + strconv.Itoa(int(f)) + ")"
}

// Errors of injected faults. Neither is, nor wraps, cas.ErrNotFound,
// cas.ErrExists or cas.ErrVersionMismatch: an injected failure never looks
// like an outcome.
var (
	// ErrUnavailable is wrapped by the error of a call a Plan failed
	// (Fail, LoseAnswer): the service could not be reached or did not
	// answer.
	ErrUnavailable = errors.New("castest: store unavailable (injected fault)")
	// ErrAnswerLost is wrapped, with ErrUnavailable, by the error of a
	// write that was applied but whose answer was lost (LoseAnswer).
	ErrAnswerLost = errors.New("castest: answer lost (injected timeout; the call may have happened)")
	// ErrCrashed is wrapped by the error of every call of a process that
	// died (Crash, CrashAfter, Store.Crash).
	ErrCrashed = errors.New("castest: the process crashed")
)

// A Plan decides the fate of each call of one process. It is called
// before the call takes effect, one call at a time (calls of the process
// are serialized around it), so it may keep state; it may also block, or
// sleep, to force an interleaving with another process. A nil Plan injects
// nothing.
type Plan func(op Op) Fault

// At injects f at the process's n-th write (0-based) and nothing else.
func At(n int, f Fault) Plan {
	return func(op Op) Fault {
		if op.Write == n {
			return f
		}
		return None
	}
}

// CrashAt kills the process before its n-th write (0-based): the n writes
// before it happened, nothing after.
func CrashAt(n int) Plan { return At(n, Crash) }

// Plans applies each plan in turn to every call; the first fault other
// than None is the call's.
func Plans(plans ...Plan) Plan {
	return func(op Op) Fault {
		f := None
		for _, p := range plans {
			if p == nil {
				continue
			}
			if g := p(op); f == None {
				f = g
			}
		}
		return f
	}
}

// Rates are the probabilities of the faults Random injects.
type Rates struct {
	// Fail, LoseAnswer and CrashAfter apply to writes; Crash to any call;
	// ReadFail to reads; Stale to stale-allowed Gets.
	Fail, LoseAnswer, Crash, CrashAfter, ReadFail, Stale float64
}

// Random injects faults at random with the given rates, as a function of
// seed and the call's Seq alone: the same seed gives the same fault to the
// same call number, however the calls of other processes interleave.
// (Calls a process makes in parallel are numbered in the order they reach
// the store, which the Go scheduler decides.)
func Random(seed uint64, r Rates) Plan {
	return func(op Op) Fault {
		x := unit(seed, op.Seq)
		if op.Stale {
			if x < r.Stale {
				return Stale
			}
			x -= r.Stale
		}
		if x < r.Crash {
			return Crash
		}
		x -= r.Crash
		if !op.Call.IsWrite() {
			if x < r.ReadFail {
				return Fail
			}
			return None
		}
		for _, c := range []struct {
			p float64
			f Fault
		}{{r.Fail, Fail}, {r.LoseAnswer, LoseAnswer}, {r.CrashAfter, CrashAfter}} {
			if x < c.p {
				return c.f
			}
			x -= c.p
		}
		return None
	}
}

// unit returns a number in [0, 1) that depends only on seed and n.
func unit(seed uint64, n int) float64 {
	h := fnv.New64a()
	var b [16]byte
	for i := 0; i < 8; i++ {
		b[i] = byte(seed >> (8 * i))
		b[8+i] = byte(uint64(n) >> (8 * i))
	}
	h.Write(b[:])
	// FNV's low bits mix poorly over nearby inputs: finish with a
	// splitmix64 round.
	z := h.Sum64() + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}
