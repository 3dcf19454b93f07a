package kube

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aiperf-go/aiperf/runner"
)

// Labels every object of a trial carries (its pod too).
const (
	LabelSweep     = "aiperf.dev/sweep"      // the sweep's name (made label-safe)
	LabelSweepID   = "aiperf.dev/sweep-id"   // the sweep's id in the parent's store
	LabelSweepUUID = "aiperf.dev/sweep-uuid" // the invocation (run_info.sweep_id)
	LabelCell      = "aiperf.dev/cell"       // the cell's id
	LabelTrial     = "aiperf.dev/trial"      // the trial's number
)

const (
	container = "aiperf"
	apiKeyKey = "api-key" // the Secret's key holding the API key
	// DefaultSpecDir is where the ConfigMap with the trial spec is mounted.
	DefaultSpecDir = "/etc/aiperf/trial"
	// workDir is the container's artifact directory, an emptyDir: its
	// files come back in the log (runner.WriteExports), then the result.
	workDir = "/var/run/aiperf/work"
	// ttlAfterFinished lets the cluster delete a finished Job whose parent
	// died before deleting it.
	ttlAfterFinished = int32(3600)
)

// Config is how trial Jobs are made.
type Config struct {
	Image string
	// Command is the aiperf executable in the image (default ["aiperf"]).
	Command []string
	// CPU and Memory are the container's resource requests ("" asks for none).
	CPU, Memory string
	// ScheduleTimeout is how long a trial's pod may take to start (to be
	// scheduled, its image pulled, its container running), from the
	// creation of its Job; it must be positive (the flag's default is 5
	// minutes).
	ScheduleTimeout time.Duration
	// Poll is how often the Job and its pod are checked besides the watch
	// (default 2 seconds).
	Poll time.Duration
}

// check refuses a config that cannot make a Job, naming the flag.
func (c Config) check() error {
	if c.Image == "" {
		return fmt.Errorf("--image is required with --executor kubernetes: the aiperf image the trial Jobs run (e.g. ghcr.io/acme/aiperf:1.2)")
	}
	for _, q := range []struct{ flag, v string }{{"--cpu", c.CPU}, {"--memory", c.Memory}} {
		if q.v == "" {
			continue
		}
		if _, err := resource.ParseQuantity(q.v); err != nil {
			return fmt.Errorf("%s %q is not a Kubernetes quantity (e.g. 2, 500m, 4Gi): %w", q.flag, q.v, err)
		}
	}
	if c.ScheduleTimeout <= 0 {
		return fmt.Errorf("--schedule-timeout must be positive (how long a pod may take to start, e.g. 5m), got %s",
			c.ScheduleTimeout)
	}
	return nil
}

// trialObjects are what one trial (or worker) creates: the Job (created suspended, so
// that the ConfigMap and the Secret exist, owned by it, before its pod),
// the ConfigMap holding the spec, and the Secret holding the API key (nil
// without one).
type trialObjects struct {
	job    *batchv1.Job
	spec   *corev1.ConfigMap
	secret *corev1.Secret
}

// objects builds the trial's objects; spec holds no secret (runner.RemoteSpec).
func (c Config) objects(name string, spec runner.Spec, apiKey string) (trialObjects, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return trialObjects{}, fmt.Errorf("encode trial spec: %w", err)
	}
	meta := metav1.ObjectMeta{Name: name, Labels: trialLabels(spec)}
	o := trialObjects{spec: &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{runner.SpecFile: string(b)}}}
	var env []corev1.EnvVar
	if apiKey != "" {
		o.secret, env = secretEnv(meta, map[string]string{runner.APIKeyEnv: apiKey})
	}
	o.job = c.podJob(meta, []string{"profile", "--spec-file", path.Join(DefaultSpecDir, runner.SpecFile), "--remote-spec",
		"--result-frame", "--artifact-dir", workDir, "--ui", "none", "--no-store", "-v"}, env,
		[]corev1.VolumeMount{
			{Name: "spec", MountPath: DefaultSpecDir, ReadOnly: true},
			{Name: "work", MountPath: workDir},
		},
		[]corev1.Volume{
			{Name: "spec", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: name}}}},
			{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		})
	return o, nil
}

// secretKeys are the Secret keys of the variables a pod reads from its
// Secret.
var secretKeys = map[string]string{runner.APIKeyEnv: apiKeyKey, WorkerTokenEnv: workerTokenKey}

// secretEnv is the Secret (named and labelled as meta) holding values,
// variable name → value, and the env that reads each through a
// secretKeyRef, never in plain env.
func secretEnv(meta metav1.ObjectMeta, values map[string]string) (*corev1.Secret, []corev1.EnvVar) {
	secret := &corev1.Secret{ObjectMeta: meta, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{}}
	var env []corev1.EnvVar
	for _, name := range slices.Sorted(maps.Keys(values)) {
		key := secretKeys[name]
		secret.Data[key] = []byte(values[name])
		env = append(env, corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: meta.Name}, Key: key},
		}})
	}
	return secret, env
}

// podJob is a Job (created suspended) whose one pod runs the aiperf image
// with args, env (after runner.ChildEnv), the mounts and volumes: never
// restarted, no retry, the resources requested, deleted by the cluster an
// hour after it finished should its parent not delete it.
func (c Config) podJob(meta metav1.ObjectMeta, args []string, env []corev1.EnvVar, mounts []corev1.VolumeMount,
	volumes []corev1.Volume) *batchv1.Job {
	requests := corev1.ResourceList{}
	if c.CPU != "" {
		requests[corev1.ResourceCPU] = resource.MustParse(c.CPU) // checked by Config.check
	}
	if c.Memory != "" {
		requests[corev1.ResourceMemory] = resource.MustParse(c.Memory)
	}
	command := c.Command
	if len(command) == 0 {
		command = []string{"aiperf"}
	}
	backoff, ttl, suspend := int32(0), ttlAfterFinished, true
	return &batchv1.Job{
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{
			BackoffLimit:            &backoff,
			TTLSecondsAfterFinished: &ttl,
			Suspend:                 &suspend,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: meta.Labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name:         container,
						Image:        c.Image,
						Command:      command,
						Args:         args,
						Env:          append([]corev1.EnvVar{{Name: runner.ChildEnv, Value: "1"}}, env...),
						Resources:    corev1.ResourceRequirements{Requests: requests},
						VolumeMounts: mounts,
					}},
					Volumes: volumes,
				},
			},
		},
	}
}

// ownedBy makes the ConfigMap and the Secret belong to the created Job: the
// cluster deletes them with it, should the parent fail to.
func (o trialObjects) ownedBy(job *batchv1.Job) {
	ref := []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID}}
	if o.spec != nil {
		o.spec.OwnerReferences = ref
	}
	if o.secret != nil {
		o.secret.OwnerReferences = ref
	}
}

func trialLabels(spec runner.Spec) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":      "aiperf",
		"app.kubernetes.io/component": "trial",
		LabelSweep:                    labelValue(spec.Info.Sweep),
		LabelSweepID:                  strconv.FormatInt(spec.Info.SweepID, 10),
		LabelSweepUUID:                labelValue(spec.Info.SweepUUID),
		LabelCell:                     labelValue(spec.Info.CellID),
		LabelTrial:                    strconv.Itoa(spec.Info.Trial),
	}
}

var notLabel = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// labelValue makes s a valid label value: at most 63 characters of
// [A-Za-z0-9._-], beginning and ending with a letter or digit.
func labelValue(s string) string {
	s = notLabel.ReplaceAllString(s, "_")
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.Trim(s, "._-")
}

var notName = regexp.MustCompile(`[^a-z0-9-]+`)

// jobName is a fresh DNS-1123 name for a trial's objects, readable in
// kubectl: aiperf-<sweep>-<cell>-t<trial>-<random>, at most 52 characters
// (room for the suffix the Job controller gives its pod).
func jobName(spec runner.Spec) string {
	part := func(s string, n int) string {
		s = strings.Trim(notName.ReplaceAllString(strings.ToLower(s), "-"), "-")
		return strings.Trim(s[:min(n, len(s))], "-")
	}
	var r [3]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails
	name := "aiperf"
	for _, p := range []string{part(spec.Info.Sweep, 16), part(spec.Info.CellID, 8), fmt.Sprintf("t%d", spec.Info.Trial), hex.EncodeToString(r[:])} {
		if p != "" {
			name += "-" + p
		}
	}
	return name
}
