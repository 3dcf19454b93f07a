package compare

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// Every workload key is a key of the stored configuration: a renamed
// setting would otherwise drop out of the comparison silently.
func TestWorkloadKeysAreConfigKeys(t *testing.T) {
	names := map[string]bool{}
	typ := reflect.TypeFor[plan.Profile]()
	for i := range typ.NumField() {
		if name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ","); name != "" {
			names[name] = true
		}
	}
	for _, k := range workloadKeys {
		assert.True(t, names[k], "%s is not a json key of plan.Profile", k)
	}
}
