package runner

import (
	"fmt"
	"os"
	"slices"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// APIKeyEnv names the variable a remote trial child (a Kubernetes pod) reads
// its API key from: a remote spec holds no secret, and the key reaches the
// child from a Secret, never in the spec.
const APIKeyEnv = "AIPERF_API_KEY"

// RemoteSpec is spec as sent to a child on another machine: without the API
// key (sent apart, see APIKeyEnv) and without a profiler mark (the parent
// cannot see the child's files). Any other secret (an auth header, a URL
// password) has no way to travel but the spec, so a profile holding one is
// refused.
func RemoteSpec(spec Spec) (Spec, string, error) {
	key := spec.Profile.APIKey
	spec.Profile.APIKey = ""
	spec.ProfilerMark, spec.ResetMark = "", ""
	if HoldsOtherSecret(spec.Profile) {
		return spec, "", fmt.Errorf("cell %s: a secret in --header, --url, --server-metrics, --gpu-telemetry or --extra-inputs "+
			"cannot be passed to a remote trial without writing it into its spec; only the API key (--api-key) "+
			"travels, as a Secret: move the credential there or use --executor local", spec.Info.CellLabel)
	}
	return spec, key, nil
}

// HoldsOtherSecret reports whether p holds a secret other than its API key
// (in --header, --url, --server-metrics, --gpu-telemetry or --extra-inputs): one that only
// its spec could carry to another machine.
func HoldsOtherSecret(p plan.Profile) bool {
	p.APIKey = ""
	return slices.ContainsFunc(p.Secrets(), func(s string) bool { return s != "" })
}

// ReadRemoteSpec reads a spec written by RemoteSpec's caller to a read-only
// file (a mounted ConfigMap, which holds no secret and stays), with the API
// key from $AIPERF_API_KEY when set.
func ReadRemoteSpec(path string) (Spec, error) {
	s, err := readSpec(path)
	if err != nil {
		return s, err
	}
	if key := os.Getenv(APIKeyEnv); key != "" {
		s.Profile.APIKey = key
	}
	return s, nil
}
