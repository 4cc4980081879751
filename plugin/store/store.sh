#!/bin/sh
# helm store: runs the helmstore command with helm's environment
# (HELM_NAMESPACE, HELM_KUBECONTEXT, KUBECONFIG, ...), and the lifecycle,
# flags and output of the helm that runs it: HELMSTORE_HELM is set from
# "$HELM_BIN version". The store is named by HELMSTORE_DRIVER (or --driver),
# since helm refuses helmstore's names in HELM_DRIVER before it runs a plugin.
# The binary: $HELM_PLUGIN_DIR/bin/helmstore if present, else helmstore on
# PATH (go install github.com/helmstore/helmstore/cmd/helmstore@latest).
case "$("${HELM_BIN:-helm}" version --template '{{.Version}}' 2>/dev/null)" in
v3.*) HELMSTORE_HELM=3 ;;
*) HELMSTORE_HELM=4 ;;
esac
export HELMSTORE_HELM
if [ -x "$HELM_PLUGIN_DIR/bin/helmstore" ]; then
	exec "$HELM_PLUGIN_DIR/bin/helmstore" "$@"
fi
if command -v helmstore >/dev/null 2>&1; then
	exec helmstore "$@"
fi
echo "helm store: no helmstore command: go install github.com/helmstore/helmstore/cmd/helmstore@latest" >&2
exit 1
