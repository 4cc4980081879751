#!/bin/sh
# helm store: runs the helmstore command with helm's environment
# (HELM_NAMESPACE, HELM_KUBECONTEXT, KUBECONFIG, HELM_DRIVER, ...):
# $HELM_PLUGIN_DIR/bin/helmstore if present, else helmstore on PATH
# (go install github.com/helmstore/helmstore/cmd/helmstore@latest).
if [ -x "$HELM_PLUGIN_DIR/bin/helmstore" ]; then
	exec "$HELM_PLUGIN_DIR/bin/helmstore" "$@"
fi
if command -v helmstore >/dev/null 2>&1; then
	exec helmstore "$@"
fi
echo "helm store: no helmstore command: go install github.com/helmstore/helmstore/cmd/helmstore@latest" >&2
exit 1
