package helm4codec

import (
	"encoding/json"
	"time"

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

// stamp is a time member as Helm's UnmarshalJSON reads it: null and "" are
// no time; set says whether one was given.
type stamp struct {
	t   time.Time
	set bool
}

func (s *stamp) UnmarshalJSON(b []byte) error {
	if string(b) == "null" || string(b) == `""` {
		return nil
	}
	s.set = true
	return s.t.UnmarshalJSON(b)
}

// infoMembers are the members of an Info decoded directly, and the kind of
// value each may hold.
var infoMembers = []member{
	{"first_deployed", timeValue}, {"last_deployed", timeValue}, {"deleted", timeValue},
	{"description", stringValue}, {"status", stringValue}, {"notes", stringValue}, {"rollback_revision", intValue},
}

// execMembers are those of a HookExecution.
var execMembers = []member{{"started_at", timeValue}, {"completed_at", timeValue}, {"phase", stringValue}}

func (i *info4) UnmarshalJSON(data []byte) error {
	target := (*rspb.Info)(i)
	if !plain(data, infoMembers) {
		return target.UnmarshalJSON(data)
	}
	var tmp struct {
		FirstDeployed    stamp  `json:"first_deployed"`
		LastDeployed     stamp  `json:"last_deployed"`
		Deleted          stamp  `json:"deleted"`
		Description      string `json:"description"`
		Status           rcommon.Status `json:"status"`
		RollbackRevision int    `json:"rollback_revision"`
		Notes            string `json:"notes"`
	}
	if err := json.Unmarshal(data, &tmp); err != nil {
		return err
	}
	// As Helm's UnmarshalJSON copies its result.
	if tmp.FirstDeployed.set {
		target.FirstDeployed = tmp.FirstDeployed.t
	}
	if tmp.LastDeployed.set {
		target.LastDeployed = tmp.LastDeployed.t
	}
	if tmp.Deleted.set {
		target.Deleted = tmp.Deleted.t
	}
	target.Description = tmp.Description
	target.Status = tmp.Status
	target.RollbackRevision = tmp.RollbackRevision
	target.Notes = tmp.Notes
	target.Resources = nil
	return nil
}

func (e *exec4) UnmarshalJSON(data []byte) error {
	target := (*rspb.HookExecution)(e)
	if !plain(data, execMembers) {
		return target.UnmarshalJSON(data)
	}
	var tmp struct {
		StartedAt   stamp  `json:"started_at"`
		CompletedAt stamp  `json:"completed_at"`
		Phase       rspb.HookPhase `json:"phase"`
	}
	if err := json.Unmarshal(data, &tmp); err != nil {
		return err
	}
	if tmp.StartedAt.set {
		target.StartedAt = tmp.StartedAt.t
	}
	if tmp.CompletedAt.set {
		target.CompletedAt = tmp.CompletedAt.t
	}
	target.Phase = tmp.Phase
	return nil
}
