package lifecycle

import (
	"context"
	"errors"
	"io"

	action3 "helm.sh/helm/v3/pkg/action"
	driver3 "helm.sh/helm/v3/pkg/storage/driver"
)

func (f *face3) install(ctx context.Context, o InstallOptions) (*Release, error) {
	ns := f.cfg.namespaceOr(o.Namespace)
	ac, err := f.configuration(ns)
	if err != nil {
		return nil, err
	}
	in := action3.NewInstall(ac)
	d := o.Deploy
	in.ChartPathOptions = chartPath3(d.Chart)
	in.CreateNamespace, in.Replace, in.GenerateName, in.NameTemplate = o.CreateNamespace, o.Replace, o.GenerateName, o.NameTemplate
	in.Force, in.DisableHooks, in.SkipCRDs, in.SubNotes = d.Apply.Force, d.DisableHooks, d.SkipCRDs, d.SubNotes
	in.Timeout, in.Wait, in.WaitForJobs, in.Atomic = d.Wait.Timeout, d.Wait.waits(), d.Wait.ForJobs, d.RollbackOnFailure
	in.Devel, in.DependencyUpdate, in.Description, in.Labels = d.Chart.Devel, d.Chart.DependencyUpdate, d.Description, d.Labels
	in.SkipSchemaValidation, in.DisableOpenAPIValidation = d.SkipSchemaValidation, d.DisableOpenAPIValidation
	in.EnableDNS, in.TakeOwnership, in.HideSecret = d.EnableDNS, d.TakeOwnership, d.HideSecret
	in.DryRunOption = dryRun3(d.DryRun)
	if in.PostRenderer, err = postRenderer3(d); err != nil {
		return nil, err
	}
	rc, err := f.registryClient(d.Chart)
	if err != nil {
		return nil, errRegistryClient(err)
	}
	in.SetRegistryClient(rc)

	args := []string{d.Chart.Ref}
	if o.Name != "" {
		args = []string{o.Name, d.Chart.Ref}
	}
	name, ref, err := in.NameAndChart(args)
	if err != nil {
		return nil, err
	}
	in.ReleaseName = name
	ch, vals, err := f.loadChart(&in.ChartPathOptions, ref, d.Chart, values3Of(d), rc)
	if err != nil {
		return nil, err
	}
	switch ch.Metadata.Type {
	case "", "application":
	default:
		return nil, notInstallable(ch.Metadata.Type)
	}
	if ch.Metadata.Deprecated {
		f.cfg.logf("WARNING: This chart is deprecated")
	}
	in.Namespace = ns
	if err := checkDryRun3(in.DryRunOption); err != nil {
		return nil, err
	}
	rel, err := in.RunWithContext(ctx, ch, vals)
	r, cerr := fromRelease3(rel)
	if err != nil {
		return r, actionErr(OpInstall, err)
	}
	return r, cerr
}

func (f *face3) upgrade(ctx context.Context, o UpgradeOptions) (*Release, error) {
	ns := f.cfg.namespaceOr(o.Namespace)
	o.Namespace = ns
	ac, err := f.configuration(ns)
	if err != nil {
		return nil, err
	}
	if o.Install {
		h := action3.NewHistory(ac)
		h.Max = 1
		versions, err := h.Run(o.Name)
		if errors.Is(err, driver3.ErrReleaseNotFound) || isUninstalled3(versions) {
			if o.Installing != nil {
				o.Installing()
			}
			return f.install(ctx, InstallOptions{Deploy: o.Deploy, Name: o.Name, CreateNamespace: o.CreateNamespace, Replace: isUninstalled3(versions)})
		} else if err != nil {
			return nil, err
		}
	}
	up := action3.NewUpgrade(ac)
	d := o.Deploy
	up.Namespace = ns
	up.ChartPathOptions = chartPath3(d.Chart)
	up.Force, up.DisableHooks, up.SkipCRDs, up.SubNotes = d.Apply.Force, d.DisableHooks, d.SkipCRDs, d.SubNotes
	up.Timeout, up.Wait, up.WaitForJobs, up.Atomic = d.Wait.Timeout, d.Wait.waits(), d.Wait.ForJobs, d.RollbackOnFailure
	up.Devel, up.DependencyUpdate, up.Description, up.Labels = d.Chart.Devel, d.Chart.DependencyUpdate, d.Description, d.Labels
	up.SkipSchemaValidation, up.DisableOpenAPIValidation = d.SkipSchemaValidation, d.DisableOpenAPIValidation
	up.EnableDNS, up.TakeOwnership, up.HideSecret = d.EnableDNS, d.TakeOwnership, d.HideSecret
	up.ResetValues, up.ReuseValues, up.ResetThenReuseValues = o.ResetValues, o.ReuseValues, o.ResetThenReuseValues
	up.MaxHistory, up.CleanupOnFail = o.MaxHistory, o.CleanupOnFail
	up.DryRunOption = dryRun3(d.DryRun)
	if up.PostRenderer, err = postRenderer3(d); err != nil {
		return nil, err
	}
	rc, err := f.registryClient(d.Chart)
	if err != nil {
		return nil, errRegistryClient(err)
	}
	up.SetRegistryClient(rc)
	if err := checkDryRun3(up.DryRunOption); err != nil {
		return nil, err
	}
	ch, vals, err := f.loadChart(&up.ChartPathOptions, d.Chart.Ref, d.Chart, values3Of(d), rc)
	if err != nil {
		return nil, err
	}
	if ch.Metadata.Deprecated {
		f.cfg.logf("WARNING: This chart is deprecated")
	}
	rel, err := up.RunWithContext(ctx, o.Name, ch, vals)
	r, cerr := fromRelease3(rel)
	if err != nil {
		return r, actionErr(OpUpgrade, err)
	}
	return r, cerr
}

func (f *face3) rollback(_ context.Context, o RollbackOptions) error {
	ac, err := f.configuration(f.cfg.namespaceOr(o.Namespace))
	if err != nil {
		return err
	}
	rb := action3.NewRollback(ac)
	rb.Version, rb.Timeout, rb.Wait, rb.WaitForJobs = o.Revision, o.Wait.Timeout, o.Wait.waits(), o.Wait.ForJobs
	rb.DisableHooks, rb.DryRun, rb.Force = o.DisableHooks, o.DryRun != "" && o.DryRun != DryRunNone, o.Apply.Force
	rb.CleanupOnFail, rb.MaxHistory = o.CleanupOnFail, o.MaxHistory
	return actionErr(OpRollback, rb.Run(o.Name))
}

func (f *face3) uninstall(_ context.Context, o UninstallOptions) (string, error) {
	if err := checkCascade(o.Cascade); err != nil {
		return "", err
	}
	ac, err := f.configuration(f.cfg.namespaceOr(o.Namespace))
	if err != nil {
		return "", err
	}
	un := action3.NewUninstall(ac)
	un.DisableHooks, un.DryRun, un.IgnoreNotFound, un.KeepHistory = o.DisableHooks, o.DryRun, o.IgnoreNotFound, o.KeepHistory
	un.Wait, un.DeletionPropagation, un.Timeout, un.Description = o.Wait.waits(), cascade(o.Cascade), o.Wait.Timeout, o.Description
	res, err := un.Run(o.Name)
	if err != nil {
		return "", actionErr(OpUninstall, err)
	}
	if res == nil {
		return "", nil
	}
	return res.Info, nil
}

func (f *face3) test(_ context.Context, o TestOptions) (*TestRun, error) {
	ns := f.cfg.namespaceOr(o.Namespace)
	ac, err := f.configuration(ns)
	if err != nil {
		return nil, err
	}
	rt := action3.NewReleaseTesting(ac)
	rt.Namespace, rt.Timeout = ns, o.Timeout
	include, exclude := testFilters(o.Filters)
	rt.Filters[action3.IncludeNameFilter] = append(rt.Filters[action3.IncludeNameFilter], include...)
	rt.Filters[action3.ExcludeNameFilter] = append(rt.Filters[action3.ExcludeNameFilter], exclude...)
	rel, runErr := rt.Run(o.Name)
	if runErr != nil && rel == nil {
		return nil, actionErr(OpTest, runErr)
	}
	r, err := fromRelease3(rel)
	if err != nil {
		return nil, err
	}
	return &TestRun{Release: r, logs: func(w io.Writer) error { return rt.GetPodLogs(w, rel) }}, actionErr(OpTest, runErr)
}
