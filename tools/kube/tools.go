//go:build tools

// Package kube pins the Kubernetes commands the crsplit tests build.
package kube

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
