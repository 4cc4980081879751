//go:build tools

// Package etcd pins the etcd server the crsplit tests build.
package etcd

import _ "go.etcd.io/etcd/server/v3"
