package helm4codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"time"
	"unicode/utf8"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
)

// Helm 4's Info and HookExecution decode their JSON through a map and back
// (UnmarshalJSON: unmarshal into a map, replace the empty-string times,
// marshal, unmarshal again), which makes a release's head a third slower
// to decode than Helm 3's, and History decodes twenty. decodeHead decodes a
// head into the same release without that detour wherever it gives the
// same result, and through Helm's own UnmarshalJSON everywhere else:
//
//   - an Info or a hook's last_run whose members are the ones Helm writes,
//     each once, spelled exactly so (JSON matches field names without
//     regard to case; Helm's map pass does not, and reorders the members),
//     their times null, "" or a string without an escape (time.Time parses
//     the raw bytes, Helm's pass the bytes it marshals again), their strings
//     strings or null, and a rollback revision null or an integer of at
//     most 15 digits (Helm's pass makes a number a float64), is decoded
//     directly: the empty string and null are the zero time, as in Helm;
//   - anything else (resources, another member, a repeated or differently
//     spelled one, a value of another type, not an object at all) goes to
//     Helm's UnmarshalJSON, on the same target.
//
// Either way the values are applied to the target as Helm's UnmarshalJSON
// applies them (times only when given), so that a member repeated in the
// head ("info" twice) ends as it does in Helm. A test checks both against
// Helm's own decoding, on the heads helmstore writes and on the ones it
// does not.

// head4 is a release as its head decodes: Release's fields, but Info and
// Hooks through the types below (the shallower field wins in JSON).
type head4 struct {
	*rspb.Release
	Info  *info4   `json:"info,omitempty"`
	Hooks []*hook4 `json:"hooks,omitempty"`
}

// hook4 is a hook as a head decodes: Hook's fields, but LastRun through
// exec4.
type hook4 struct {
	*rspb.Hook
	LastRun exec4 `json:"last_run"`
}

// info4 and exec4 are Helm's Info and HookExecution with the UnmarshalJSON
// of this file.
type (
	info4 rspb.Info
	exec4 rspb.HookExecution
)

// decodeHead decodes head, a release's head JSON, into rls, as
// json.Unmarshal(head, rls) does.
func decodeHead(head []byte, rls *rspb.Release) error {
	h := head4{Release: rls}
	if err := json.Unmarshal(head, &h); err != nil {
		return err
	}
	rls.Info = (*rspb.Info)(h.Info)
	rls.Hooks = nil
	if h.Hooks != nil {
		rls.Hooks = make([]*rspb.Hook, len(h.Hooks))
		for i, hk := range h.Hooks {
			if hk == nil {
				continue
			}
			if hk.Hook == nil {
				hk.Hook = new(rspb.Hook)
			}
			hk.Hook.LastRun = rspb.HookExecution(hk.LastRun)
			rls.Hooks[i] = hk.Hook
		}
	}
	return nil
}

// The members an Info and a HookExecution may have to be decoded
// directly, and the kind of value each may hold; the index of each names
// its value in what plain returns.
var (
	infoMembers = []member{
		{"first_deployed", timeValue}, {"last_deployed", timeValue}, {"deleted", timeValue},
		{"description", stringValue}, {"status", stringValue}, {"notes", stringValue}, {"rollback_revision", intValue},
	}
	execMembers = []member{{"started_at", timeValue}, {"completed_at", timeValue}, {"phase", stringValue}}
)

func (i *info4) UnmarshalJSON(data []byte) error {
	target := (*rspb.Info)(i)
	v, ok := plain(data, infoMembers)
	if !ok {
		return target.UnmarshalJSON(data)
	}
	// Every value first, then all of them, as Helm's UnmarshalJSON copies
	// its result only once it has one.
	var first, last, deleted stamp
	var desc, status, notes string
	var rollback int
	err := errors.Join(first.decode(v[0]), last.decode(v[1]), deleted.decode(v[2]),
		decodeString(v[3], &desc), decodeString(v[4], &status), decodeString(v[5], &notes), decodeInt(v[6], &rollback))
	if err != nil {
		return err
	}
	first.apply(&target.FirstDeployed)
	last.apply(&target.LastDeployed)
	deleted.apply(&target.Deleted)
	target.Description, target.Status, target.RollbackRevision, target.Notes = desc, rcommon.Status(status), rollback, notes
	target.Resources = nil
	return nil
}

func (e *exec4) UnmarshalJSON(data []byte) error {
	target := (*rspb.HookExecution)(e)
	v, ok := plain(data, execMembers)
	if !ok {
		return target.UnmarshalJSON(data)
	}
	var started, completed stamp
	var phase string
	if err := errors.Join(started.decode(v[0]), completed.decode(v[1]), decodeString(v[2], &phase)); err != nil {
		return err
	}
	started.apply(&target.StartedAt)
	completed.apply(&target.CompletedAt)
	target.Phase = rspb.HookPhase(phase)
	return nil
}

// stamp is a time member as Helm's UnmarshalJSON reads it: absent, null
// and "" are no time; set says whether one was given.
type stamp struct {
	t   time.Time
	set bool
}

// decode reads the value v of a time member (nil for an absent one).
func (s *stamp) decode(v []byte) error {
	if v == nil || string(v) == "null" || string(v) == `""` {
		return nil
	}
	s.set = true
	return s.t.UnmarshalJSON(v)
}

// apply sets *t to the time given, if one was.
func (s *stamp) apply(t *time.Time) {
	if s.set {
		*t = s.t
	}
}

// decodeString reads the value v of a string member (nil for an absent
// one; null is "", as json leaves a string): a string without escapes
// that is valid UTF-8 as it is, any other through encoding/json.
func decodeString(v []byte, s *string) error {
	if v == nil || string(v) == "null" {
		*s = ""
		return nil
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		*s = string(inner)
		return nil
	}
	return json.Unmarshal(v, s)
}

// decodeInt reads the value v of an integer member (nil for an absent one,
// null is 0): plain made sure it is at most 15 digits.
func decodeInt(v []byte, n *int) error {
	if v == nil || string(v) == "null" {
		*n = 0
		return nil
	}
	var err error
	*n, err = strconv.Atoi(string(v))
	return err
}
