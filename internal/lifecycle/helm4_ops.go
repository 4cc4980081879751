package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/storage/driver"
)

// serverSideInstall is Helm 4's server-side apply choice for an install:
// on unless "false".
func serverSideInstall(a Apply) bool { return a.ServerSide != "false" }

// serverSideUpgrade is Helm 4's --server-side for an upgrade or rollback:
// "auto" (the release's own method) unless set.
func serverSideUpgrade(a Apply) string {
	if a.ServerSide == "" {
		return "auto"
	}
	return a.ServerSide
}

func (f *face4) install(ctx context.Context, o InstallOptions) (*Release, error) {
	ns := f.cfg.namespaceOr(o.Namespace)
	ac, err := f.configuration(ns)
	if err != nil {
		return nil, err
	}
	in := action.NewInstall(ac)
	d := o.Deploy
	in.ChartPathOptions = chartPath4(d.Chart)
	in.CreateNamespace, in.Replace, in.GenerateName, in.NameTemplate = o.CreateNamespace, o.Replace, o.GenerateName, o.NameTemplate
	in.ForceReplace, in.ForceConflicts, in.ServerSideApply = d.Apply.Force, d.Apply.ForceConflicts, serverSideInstall(d.Apply)
	in.DisableHooks, in.SkipCRDs, in.SubNotes = d.DisableHooks, d.SkipCRDs, d.SubNotes
	in.Timeout, in.WaitStrategy, in.WaitForJobs, in.RollbackOnFailure = d.Wait.Timeout, waitStrategy(d.Wait), d.Wait.ForJobs, d.RollbackOnFailure
	in.WaitOptions = append(in.WaitOptions, waitOptions()...)
	in.Devel, in.DependencyUpdate, in.Description, in.Labels = d.Chart.Devel, d.Chart.DependencyUpdate, d.Description, d.Labels
	in.SkipSchemaValidation, in.DisableOpenAPIValidation = d.SkipSchemaValidation, d.DisableOpenAPIValidation
	in.EnableDNS, in.TakeOwnership, in.HideSecret = d.EnableDNS, d.TakeOwnership, d.HideSecret
	if in.DryRunStrategy, err = dryRun4(d.DryRun); err != nil {
		return nil, err
	}
	if in.PostRenderer, err = f.postRenderer4(d); err != nil {
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
	ch, acc, vals, err := f.loadChart(&in.ChartPathOptions, ref, d.Chart, d.Values, rc)
	if err != nil {
		return nil, err
	}
	switch t := acc.MetadataAsMap()["Type"]; t {
	case nil, "", "application":
	default:
		return nil, notInstallable(fmt.Sprint(t))
	}
	in.Namespace = ns
	rel, err := in.RunWithContext(ctx, ch, vals)
	r, cerr := fromReleaser(rel)
	if cerr != nil {
		return nil, cerr
	}
	return r, actionErr(OpInstall, err)
}

func (f *face4) upgrade(ctx context.Context, o UpgradeOptions) (*Release, error) {
	ns := f.cfg.namespaceOr(o.Namespace)
	o.Namespace = ns
	ac, err := f.configuration(ns)
	if err != nil {
		return nil, err
	}
	d := o.Deploy
	up := action.NewUpgrade(ac)
	if up.DryRunStrategy, err = dryRun4(d.DryRun); err != nil {
		return nil, err
	}
	if o.Install {
		h := action.NewHistory(ac)
		h.Max = 1
		versions, err := h.Run(o.Name)
		if errors.Is(err, driver.ErrReleaseNotFound) || isUninstalled4(versions) {
			if o.Installing != nil {
				o.Installing()
			}
			o.Deploy.Apply.ServerSide = fmt.Sprint(serverSideUpgrade(d.Apply) != "false")
			return f.install(ctx, InstallOptions{Deploy: o.Deploy, Name: o.Name, CreateNamespace: o.CreateNamespace, Replace: isUninstalled4(versions)})
		} else if err != nil {
			return nil, err
		}
	}
	up.Namespace = ns
	up.ChartPathOptions = chartPath4(d.Chart)
	up.ForceReplace, up.ForceConflicts, up.ServerSideApply = d.Apply.Force, d.Apply.ForceConflicts, serverSideUpgrade(d.Apply)
	up.DisableHooks, up.SkipCRDs, up.SubNotes = d.DisableHooks, d.SkipCRDs, d.SubNotes
	up.Timeout, up.WaitStrategy, up.WaitForJobs, up.RollbackOnFailure = d.Wait.Timeout, waitStrategy(d.Wait), d.Wait.ForJobs, d.RollbackOnFailure
	up.WaitOptions = append(up.WaitOptions, waitOptions()...)
	up.Devel, up.DependencyUpdate, up.Description, up.Labels = d.Chart.Devel, d.Chart.DependencyUpdate, d.Description, d.Labels
	up.SkipSchemaValidation, up.DisableOpenAPIValidation = d.SkipSchemaValidation, d.DisableOpenAPIValidation
	up.EnableDNS, up.TakeOwnership, up.HideSecret = d.EnableDNS, d.TakeOwnership, d.HideSecret
	up.ResetValues, up.ReuseValues, up.ResetThenReuseValues = o.ResetValues, o.ReuseValues, o.ResetThenReuseValues
	up.MaxHistory, up.CleanupOnFail = o.MaxHistory, o.CleanupOnFail
	if up.PostRenderer, err = f.postRenderer4(d); err != nil {
		return nil, err
	}
	rc, err := f.registryClient(d.Chart)
	if err != nil {
		return nil, errRegistryClient(err)
	}
	up.SetRegistryClient(rc)
	ch, _, vals, err := f.loadChart(&up.ChartPathOptions, d.Chart.Ref, d.Chart, d.Values, rc)
	if err != nil {
		return nil, err
	}
	rel, err := up.RunWithContext(ctx, o.Name, ch, vals)
	r, cerr := fromReleaser(rel)
	if cerr != nil {
		return nil, cerr
	}
	return r, actionErr(OpUpgrade, err)
}

func (f *face4) rollback(_ context.Context, o RollbackOptions) error {
	if n := utf8.RuneCountInString(o.Description); n > action.MaxDescriptionLength {
		return fmt.Errorf("description must be %d characters or less, got %d", action.MaxDescriptionLength, n)
	}
	ac, err := f.configuration(f.cfg.namespaceOr(o.Namespace))
	if err != nil {
		return err
	}
	rb := action.NewRollback(ac)
	rb.Version, rb.Timeout, rb.WaitStrategy, rb.WaitForJobs = o.Revision, o.Wait.Timeout, waitStrategy(o.Wait), o.Wait.ForJobs
	rb.WaitOptions = append(rb.WaitOptions, waitOptions()...)
	rb.DisableHooks, rb.CleanupOnFail, rb.MaxHistory, rb.Description = o.DisableHooks, o.CleanupOnFail, o.MaxHistory, o.Description
	rb.ForceReplace, rb.ForceConflicts, rb.ServerSideApply = o.Apply.Force, o.Apply.ForceConflicts, serverSideUpgrade(o.Apply)
	if rb.DryRunStrategy, err = dryRun4(o.DryRun); err != nil {
		return err
	}
	return actionErr(OpRollback, rb.Run(o.Name))
}

func (f *face4) uninstall(_ context.Context, o UninstallOptions) (string, error) {
	if err := checkCascade(o.Cascade); err != nil {
		return "", err
	}
	ac, err := f.configuration(f.cfg.namespaceOr(o.Namespace))
	if err != nil {
		return "", err
	}
	un := action.NewUninstall(ac)
	un.DisableHooks, un.DryRun, un.IgnoreNotFound, un.KeepHistory = o.DisableHooks, o.DryRun, o.IgnoreNotFound, o.KeepHistory
	un.WaitStrategy, un.DeletionPropagation, un.Timeout, un.Description = waitStrategy(o.Wait), cascade(o.Cascade), o.Wait.Timeout, o.Description
	un.WaitOptions = append(un.WaitOptions, waitOptions()...)
	res, err := un.Run(o.Name)
	if err != nil {
		return "", actionErr(OpUninstall, err)
	}
	if res == nil {
		return "", nil
	}
	return res.Info, nil
}

func (f *face4) test(_ context.Context, o TestOptions) (*TestRun, error) {
	ns := f.cfg.namespaceOr(o.Namespace)
	ac, err := f.configuration(ns)
	if err != nil {
		return nil, err
	}
	rt := action.NewReleaseTesting(ac)
	rt.Namespace, rt.Timeout = ns, o.Timeout
	rt.WaitOptions = append(rt.WaitOptions, waitOptions()...)
	include, exclude := testFilters(o.Filters)
	rt.Filters[action.IncludeNameFilter] = append(rt.Filters[action.IncludeNameFilter], include...)
	rt.Filters[action.ExcludeNameFilter] = append(rt.Filters[action.ExcludeNameFilter], exclude...)
	rel, shutdown, runErr := rt.Run(o.Name)
	if runErr != nil && rel == nil {
		if shutdown != nil {
			runErr = errors.Join(runErr, shutdown())
		}
		return nil, actionErr(OpTest, runErr)
	}
	r, err := fromReleaser(rel)
	if err != nil {
		return nil, err
	}
	return &TestRun{Release: r, logs: func(w io.Writer) error { return rt.GetPodLogs(w, r.Release) }, done: shutdown}, actionErr(OpTest, runErr)
}
