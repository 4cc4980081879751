package cli

import (
	rspb "helm.sh/helm/v4/pkg/release/v1"
)

// release3 is a release without its chart in the JSON form Helm 3 gives
// it (helm status -o json): its times are "" when zero rather than left
// out (omitempty never omits a struct, as Helm 3's time is), and Helm 4's rollback_revision and apply_method are not there.
type release3 struct {
	Name      string         `json:"name,omitempty"`
	Info      *info3         `json:"info,omitempty"`
	Config    map[string]any `json:"config,omitempty"`
	Manifest  string         `json:"manifest,omitempty"`
	Hooks     []*hook3       `json:"hooks,omitempty"`
	Version   int            `json:"version,omitempty"`
	Namespace string         `json:"namespace,omitempty"`
}

// info3 is a release's info in Helm 3's JSON form.
type info3 struct {
	FirstDeployed helm3Time `json:"first_deployed"`
	LastDeployed  helm3Time `json:"last_deployed"`
	Deleted       helm3Time `json:"deleted"`
	Description   string    `json:"description,omitempty"`
	Status        string    `json:"status,omitempty"`
	Notes         string    `json:"notes,omitempty"`
}

// hook3 is a hook in Helm 3's JSON form.
type hook3 struct {
	Name              string                     `json:"name,omitempty"`
	Kind              string                     `json:"kind,omitempty"`
	Path              string                     `json:"path,omitempty"`
	Manifest          string                     `json:"manifest,omitempty"`
	Events            []rspb.HookEvent           `json:"events,omitempty"`
	LastRun           hookRun3                   `json:"last_run"`
	Weight            int                        `json:"weight,omitempty"`
	DeletePolicies    []rspb.HookDeletePolicy    `json:"delete_policies,omitempty"`
	OutputLogPolicies []rspb.HookOutputLogPolicy `json:"output_log_policies,omitempty"`
}

// hookRun3 is a hook's last run in Helm 3's JSON form.
type hookRun3 struct {
	StartedAt   helm3Time      `json:"started_at"`
	CompletedAt helm3Time      `json:"completed_at"`
	Phase       rspb.HookPhase `json:"phase"`
}

// helm3Release returns r, without its chart, in Helm 3's JSON form.
func helm3Release(r *rspb.Release) *release3 {
	out := &release3{Name: r.Name, Config: r.Config, Manifest: r.Manifest, Version: r.Version, Namespace: r.Namespace}
	if i := r.Info; i != nil {
		out.Info = &info3{FirstDeployed: helm3Time{i.FirstDeployed}, LastDeployed: helm3Time{i.LastDeployed},
			Deleted: helm3Time{i.Deleted}, Description: i.Description, Status: i.Status.String(), Notes: i.Notes}
	}
	for _, h := range r.Hooks {
		out.Hooks = append(out.Hooks, &hook3{Name: h.Name, Kind: h.Kind, Path: h.Path, Manifest: h.Manifest,
			Events: h.Events, Weight: h.Weight, DeletePolicies: h.DeletePolicies, OutputLogPolicies: h.OutputLogPolicies,
			LastRun: hookRun3{StartedAt: helm3Time{h.LastRun.StartedAt}, CompletedAt: helm3Time{h.LastRun.CompletedAt}, Phase: h.LastRun.Phase}})
	}
	return out
}
