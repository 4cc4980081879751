package drivertest

import (
	chart "helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	helmtime "helm.sh/helm/v3/pkg/time"
	common4 "helm.sh/helm/v4/pkg/chart/common"
	chart4 "helm.sh/helm/v4/pkg/chart/v2"
	relcommon4 "helm.sh/helm/v4/pkg/release/common"
	release4 "helm.sh/helm/v4/pkg/release/v1"
)

// The suite's tables are written in Helm 3's types; on the Helm 4 run their
// releases cross to Helm 4's v1 types and back here, field by field. What
// the two share (bytes, values, labels, maintainers, dependencies) is shared,
// not copied: a conversion costs a few allocations per file whatever the
// release's size, and a store that aliases what it was given or hands out
// what it keeps is caught as on the Helm 3 run. Fields only Helm 4 knows
// (ApplyMethod, RollbackRevision, the charts' and files' ModTimes) are zero
// in what crosses to Helm 4 and dropped on the way back: the tables never set
// them (the Helm-4-only tests do).

// toHelm4 returns r as a Helm 4 release.
func toHelm4(r *release.Release) *release4.Release {
	if r == nil {
		return nil
	}
	return &release4.Release{
		Name:      r.Name,
		Info:      info4(r.Info),
		Chart:     chartTo4(r.Chart),
		Config:    r.Config,
		Manifest:  r.Manifest,
		Hooks:     each(r.Hooks, hook4),
		Version:   r.Version,
		Namespace: r.Namespace,
		Labels:    r.Labels,
	}
}

// toHelm3 returns r as a Helm 3 release.
func toHelm3(r *release4.Release) *release.Release {
	if r == nil {
		return nil
	}
	return &release.Release{
		Name:      r.Name,
		Info:      info3(r.Info),
		Chart:     chartTo3(r.Chart),
		Config:    r.Config,
		Manifest:  r.Manifest,
		Hooks:     each(r.Hooks, hook3),
		Version:   r.Version,
		Namespace: r.Namespace,
		Labels:    r.Labels,
	}
}

// each converts every element of xs with f, keeping nil as nil and empty as
// empty.
func each[A, B any](xs []*A, f func(*A) *B) []*B {
	if xs == nil {
		return nil
	}
	out := make([]*B, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

func info4(i *release.Info) *release4.Info {
	if i == nil {
		return nil
	}
	return &release4.Info{
		FirstDeployed: i.FirstDeployed.Time,
		LastDeployed:  i.LastDeployed.Time,
		Deleted:       i.Deleted.Time,
		Description:   i.Description,
		Status:        relcommon4.Status(i.Status),
		Notes:         i.Notes,
		Resources:     i.Resources,
	}
}

func info3(i *release4.Info) *release.Info {
	if i == nil {
		return nil
	}
	return &release.Info{
		FirstDeployed: helmtime.Time{Time: i.FirstDeployed},
		LastDeployed:  helmtime.Time{Time: i.LastDeployed},
		Deleted:       helmtime.Time{Time: i.Deleted},
		Description:   i.Description,
		Status:        release.Status(i.Status),
		Notes:         i.Notes,
		Resources:     i.Resources,
	}
}

func hook4(h *release.Hook) *release4.Hook {
	if h == nil {
		return nil
	}
	return &release4.Hook{
		Name:     h.Name,
		Kind:     h.Kind,
		Path:     h.Path,
		Manifest: h.Manifest,
		Events:   convertStrings[release.HookEvent, release4.HookEvent](h.Events),
		LastRun: release4.HookExecution{
			StartedAt:   h.LastRun.StartedAt.Time,
			CompletedAt: h.LastRun.CompletedAt.Time,
			Phase:       release4.HookPhase(h.LastRun.Phase),
		},
		Weight:            h.Weight,
		DeletePolicies:    convertStrings[release.HookDeletePolicy, release4.HookDeletePolicy](h.DeletePolicies),
		OutputLogPolicies: convertStrings[release.HookOutputLogPolicy, release4.HookOutputLogPolicy](h.OutputLogPolicies),
	}
}

func hook3(h *release4.Hook) *release.Hook {
	if h == nil {
		return nil
	}
	return &release.Hook{
		Name:     h.Name,
		Kind:     h.Kind,
		Path:     h.Path,
		Manifest: h.Manifest,
		Events:   convertStrings[release4.HookEvent, release.HookEvent](h.Events),
		LastRun: release.HookExecution{
			StartedAt:   helmtime.Time{Time: h.LastRun.StartedAt},
			CompletedAt: helmtime.Time{Time: h.LastRun.CompletedAt},
			Phase:       release.HookPhase(h.LastRun.Phase),
		},
		Weight:            h.Weight,
		DeletePolicies:    convertStrings[release4.HookDeletePolicy, release.HookDeletePolicy](h.DeletePolicies),
		OutputLogPolicies: convertStrings[release4.HookOutputLogPolicy, release.HookOutputLogPolicy](h.OutputLogPolicies),
	}
}

// convertStrings converts a slice of one string type to another (hook
// events and policies), keeping nil as nil.
func convertStrings[A, B ~string](xs []A) []B {
	if xs == nil {
		return nil
	}
	out := make([]B, len(xs))
	for i, x := range xs {
		out[i] = B(x)
	}
	return out
}

// chartTo4 returns c, and its dependencies, as a Helm 4 chart.
func chartTo4(c *chart.Chart) *chart4.Chart {
	if c == nil {
		return nil
	}
	out := &chart4.Chart{
		Raw:       each(c.Raw, file4),
		Metadata:  metadata4(c.Metadata),
		Lock:      lock4(c.Lock),
		Templates: each(c.Templates, file4),
		Values:    c.Values,
		Schema:    c.Schema,
		Files:     each(c.Files, file4),
	}
	if deps := c.Dependencies(); deps != nil {
		out.SetDependencies(each(deps, chartTo4)...)
	}
	return out
}

// chartTo3 returns c, and its dependencies, as a Helm 3 chart.
func chartTo3(c *chart4.Chart) *chart.Chart {
	if c == nil {
		return nil
	}
	out := &chart.Chart{
		Raw:       each(c.Raw, file3),
		Metadata:  metadata3(c.Metadata),
		Lock:      lock3(c.Lock),
		Templates: each(c.Templates, file3),
		Values:    c.Values,
		Schema:    c.Schema,
		Files:     each(c.Files, file3),
	}
	if deps := c.Dependencies(); deps != nil {
		out.SetDependencies(each(deps, chartTo3)...)
	}
	return out
}

func file4(f *chart.File) *common4.File {
	if f == nil {
		return nil
	}
	return &common4.File{Name: f.Name, Data: f.Data}
}

func file3(f *common4.File) *chart.File {
	if f == nil {
		return nil
	}
	return &chart.File{Name: f.Name, Data: f.Data}
}

// The maintainer and dependency types of the two Helms have the same
// fields: their values are shared, by pointer conversion.

func maintainer4(m *chart.Maintainer) *chart4.Maintainer { return (*chart4.Maintainer)(m) }
func maintainer3(m *chart4.Maintainer) *chart.Maintainer { return (*chart.Maintainer)(m) }
func dependency4(d *chart.Dependency) *chart4.Dependency { return (*chart4.Dependency)(d) }
func dependency3(d *chart4.Dependency) *chart.Dependency { return (*chart.Dependency)(d) }

func metadata4(m *chart.Metadata) *chart4.Metadata {
	if m == nil {
		return nil
	}
	return &chart4.Metadata{
		Name: m.Name, Home: m.Home, Sources: m.Sources, Version: m.Version, Description: m.Description,
		Keywords: m.Keywords, Maintainers: each(m.Maintainers, maintainer4), Icon: m.Icon,
		APIVersion: m.APIVersion, Condition: m.Condition, Tags: m.Tags, AppVersion: m.AppVersion,
		Deprecated: m.Deprecated, Annotations: m.Annotations, KubeVersion: m.KubeVersion,
		Dependencies: each(m.Dependencies, dependency4), Type: m.Type,
	}
}

func metadata3(m *chart4.Metadata) *chart.Metadata {
	if m == nil {
		return nil
	}
	return &chart.Metadata{
		Name: m.Name, Home: m.Home, Sources: m.Sources, Version: m.Version, Description: m.Description,
		Keywords: m.Keywords, Maintainers: each(m.Maintainers, maintainer3), Icon: m.Icon,
		APIVersion: m.APIVersion, Condition: m.Condition, Tags: m.Tags, AppVersion: m.AppVersion,
		Deprecated: m.Deprecated, Annotations: m.Annotations, KubeVersion: m.KubeVersion,
		Dependencies: each(m.Dependencies, dependency3), Type: m.Type,
	}
}

func lock4(l *chart.Lock) *chart4.Lock {
	if l == nil {
		return nil
	}
	return &chart4.Lock{Generated: l.Generated, Digest: l.Digest, Dependencies: each(l.Dependencies, dependency4)}
}

func lock3(l *chart4.Lock) *chart.Lock {
	if l == nil {
		return nil
	}
	return &chart.Lock{Generated: l.Generated, Digest: l.Digest, Dependencies: each(l.Dependencies, dependency3)}
}
