package crsplit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/fixture"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
)

// bindRole creates the shipped Role (with rules, when given, instead of the
// shipped ones) in ns and binds it to user, then waits until the API
// server's authorizer grants it.
func bindRole(t *testing.T, k *kubeenv.Server, ns, user string, rules []rbacv1.PolicyRule) {
	t.Helper()
	role, _, err := RBAC()
	if err != nil {
		t.Fatal(err)
	}
	role.Namespace = ns
	if rules != nil {
		role.Rules = rules
	}
	cs := kubeClient(t, k, kubeenv.Admin)
	ctx := ctxT(t)
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: RBACName + "-" + user, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: RBACName},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Wait for the authorizer's caches: the first rule must be granted.
	r := role.Rules[0]
	waitAllowed(t, k, user, ns, r.Resources[0], r.Verbs[0])
}

func waitAllowed(t *testing.T, k *kubeenv.Server, user, ns, res, verb string) {
	t.Helper()
	cs := kubeClient(t, k, kubeenv.Admin)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ok := testenv.WaitFor(ctx, func() bool {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: Group, Resource: res},
		}}
		got, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		return err == nil && got.Status.Allowed
	})
	if !ok {
		t.Fatalf("%s was never allowed to %s %s in %s", user, verb, res, ns)
	}
}

// lifecycle exercises every request the backend makes: creates with new
// and reused parts (one chunked), reads, queries, an update, stats, and
// deletes that collect parts.
func lifecycle(s helm3.Store, ns string) error {
	for v := 1; v <= 2; v++ {
		if err := s.Create(key("app", v), fixture.LargeRelease("app", ns, v)); err != nil {
			return err
		}
	}
	if _, err := s.Get(key("app", 1)); err != nil {
		return err
	}
	if _, err := s.Query(map[string]string{"name": "app", "owner": "helm"}); err != nil {
		return err
	}
	r := fixture.LargeRelease("app", ns, 1)
	r.Info.Status = release.StatusSuperseded
	if err := s.Update(key("app", 1), r); err != nil {
		return err
	}
	if _, err := s.Stats(context.Background()); err != nil {
		return err
	}
	for v := 1; v <= 2; v++ {
		if _, err := s.Delete(key("app", v)); err != nil {
			return err
		}
	}
	st, err := s.Stats(context.Background())
	if err != nil {
		return err
	}
	if st.Releases != 0 || st.TotalParts() != 0 {
		return fmt.Errorf("lifecycle left %+v", st)
	}
	return nil
}

// TestRBACRole: a user bound to the shipped Role in one namespace manages
// releases there, and gets a clear permission error — never "not found" —
// anywhere else.
func TestRBACRole(t *testing.T) {
	k := cluster(t)
	mine, theirs := newNamespace(t, k), newNamespace(t, k)
	bindRole(t, k, mine, "alice", nil)
	admin, _ := openAs(t, k, kubeenv.Admin, theirs)
	if err := admin.Create(key("secret-app", 1), smallRelease("secret-app", theirs, 1, "c")); err != nil {
		t.Fatal(err)
	}

	s, _ := openAs(t, k, "alice", mine)
	if err := lifecycle(s, mine); err != nil {
		t.Fatalf("alice in her own namespace: %v", err)
	}

	other := s.Namespace(theirs)
	checks := map[string]error{}
	_, checks["get"] = other.Get(key("secret-app", 1))
	_, checks["get missing"] = other.Get(key("nothing", 1))
	_, checks["list"] = other.List(func(*release.Release) bool { return true })
	_, checks["query"] = other.Query(map[string]string{"name": "secret-app"})
	checks["create"] = other.Create(key("x", 1), smallRelease("x", theirs, 1, "c"))
	checks["update"] = other.Update(key("secret-app", 1), smallRelease("secret-app", theirs, 1, "c"))
	_, checks["delete"] = other.Delete(key("secret-app", 1))
	_, checks["list all namespaces"] = s.Namespace("").List(func(*release.Release) bool { return true })
	for op, err := range checks {
		if err == nil {
			t.Fatalf("alice could %s in namespace %s", op, theirs)
		}
		if errors.Is(err, helm3.ErrReleaseNotFound) || errors.Is(err, helm3.ErrReleaseExists) {
			t.Fatalf("%s in a forbidden namespace reported %v: permission errors must not look like not found", op, err)
		}
		if !errors.Is(err, ErrForbidden) || !errors.Is(err, helm3.ErrAccessDenied) || errors.Is(err, helm3.ErrUnavailable) || !strings.Contains(err.Error(), "forbidden") || !strings.Contains(err.Error(), `"alice"`) {
			t.Fatalf("%s in a forbidden namespace: %v; want a permission error naming the user", op, err)
		}
	}
	t.Logf("example: %v", checks["get"])
	if _, err := admin.Get(key("secret-app", 1)); err != nil {
		t.Fatalf("alice's attempts damaged the other namespace: %v", err)
	}
}

// TestRBACClusterRole: the shipped ClusterRole, bound cluster-wide, lists
// releases across namespaces (as helm list -A does).
func TestRBACClusterRole(t *testing.T) {
	k := cluster(t)
	ns1, ns2 := newNamespace(t, k), newNamespace(t, k)
	_, cr, err := RBAC()
	if err != nil {
		t.Fatal(err)
	}
	cs := kubeClient(t, k, kubeenv.Admin)
	ctx := ctxT(t)
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, cr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.RbacV1().ClusterRoles().Delete(context.Background(), cr.Name, metav1.DeleteOptions{}) })
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: RBACName + "-carol"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: RBACName},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "carol"}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), crb.Name, metav1.DeleteOptions{})
	})
	waitAllowed(t, k, "carol", "", resReleases, "list")
	s, _ := openAs(t, k, "carol", ns1)
	for _, ns := range []string{ns1, ns2} {
		if err := s.Namespace(ns).Create(key("web", 1), smallRelease("web", ns, 1, "c")); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := s.Namespace("").List(func(r *release.Release) bool { return r.Namespace == ns1 || r.Namespace == ns2 })
	if err != nil || len(rs) != 2 {
		t.Fatalf("carol listing all namespaces: %d, %v", len(rs), err)
	}
	ns3 := newNamespace(t, k)
	if err := lifecycle(s.Namespace(ns3), ns3); err != nil {
		t.Fatalf("carol: %v", err)
	}
}

// TestRBACExactlyWhatIsNeeded removes each verb the Role grants, one at a
// time, and checks the backend then fails (with a permission error): no
// grant in the shipped Role is superfluous. The Role grants nothing outside
// helmstore.io.
func TestRBACExactlyWhatIsNeeded(t *testing.T) {
	k := cluster(t)
	role, cluster, err := RBAC()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(role.Rules) != fmt.Sprint(cluster.Rules) {
		t.Fatal("the Role and the ClusterRole grant different rules")
	}
	for _, r := range role.Rules {
		if len(r.APIGroups) != 1 || r.APIGroups[0] != Group || len(r.ResourceNames) != 0 || len(r.NonResourceURLs) != 0 {
			t.Fatalf("rule %+v reaches beyond %s", r, Group)
		}
		for _, v := range r.Verbs {
			if v == "*" || v == "watch" || v == "deletecollection" {
				t.Fatalf("rule %+v grants %s, which the kubeBackend never uses", r, v)
			}
		}
	}
	for i, r := range role.Rules {
		for j, verb := range r.Verbs {
			name := strings.Join(r.Resources, ",") + ":" + verb
			t.Run(name, func(t *testing.T) {
				rules := make([]rbacv1.PolicyRule, len(role.Rules))
				for x := range role.Rules {
					rules[x] = *role.Rules[x].DeepCopy()
				}
				rules[i].Verbs = append(append([]string{}, r.Verbs[:j]...), r.Verbs[j+1:]...)
				ns := newNamespace(t, k)
				// Bind the reduced Role, waiting on a verb it still has.
				user := "bob"
				keep := rules[(i+1)%len(rules)]
				bindRole(t, k, ns, user, rules)
				waitAllowed(t, k, user, ns, keep.Resources[0], keep.Verbs[0])
				s, err := openStore(ctxT(t), k.Config(user))
				if err != nil {
					t.Fatal(err)
				}
				err = lifecycle(s.Namespace(ns), ns)
				if err == nil {
					t.Fatalf("the kubeBackend worked without %s on %v: the grant is not needed", verb, r.Resources)
				}
				if !errors.Is(err, ErrForbidden) {
					t.Fatalf("without %s on %v: %v; want a permission error", verb, r.Resources, err)
				}
			})
		}
	}
}

// A token the API server does not know (401) is ErrUnauthorized, with
// driver.ErrAccessDenied, and not ErrForbidden (whose remedy, an RBAC
// Role, would not help).
func TestUnknownTokenIsUnauthorized(t *testing.T) {
	k := cluster(t)
	rc := k.Config(kubeenv.Admin)
	rc.BearerToken = "helmstore-test-no-such-token"
	s, err := openStore(ctxT(t), rc)
	if err == nil {
		defer s.Close()
		_, err = s.Get("sh.helm.release.v1.app.v1")
	}
	if !errors.Is(err, ErrUnauthorized) || !errors.Is(err, helm3.ErrAccessDenied) || errors.Is(err, ErrForbidden) || errors.Is(err, helm3.ErrUnavailable) {
		t.Fatalf("with an unknown token: %v; want ErrUnauthorized and helm3.ErrAccessDenied only", err)
	}
}
