package metrics

// BranchStats counts the branches of a DAG run's sessions (dag_jsonl's
// forks and spawns): AIPerf's branch_stats. ParentsFailed stays 0: a
// child's error never fails its parent (AIPerf's default).
type BranchStats struct {
	ChildrenSpawned   int `json:"children_spawned"`   // branches started
	ChildrenCompleted int `json:"children_completed"` // branches whose last turn succeeded
	ChildrenErrored   int `json:"children_errored"`   // branches whose last turn failed
	ChildrenTruncated int `json:"children_truncated"` // branches the phase stopped before their last turn
	ChildrenDelayed   int `json:"children_delayed"`   // branches whose turn 0 waited for its delay
	ParentsSuspended  int `json:"parents_suspended"`  // turns that waited for the branches they join
	ParentsResumed    int `json:"parents_resumed"`    // of them, sent once the branches ended
	ParentsFailed     int `json:"parents_failed_due_to_child_error"`
	JoinsSuppressed   int `json:"joins_suppressed"` // joined branches the phase stopped: their join never came
}

// Add adds o's counts to s (a worker's to the run's, a phase's to the
// next).
func (s *BranchStats) Add(o BranchStats) {
	s.ChildrenSpawned += o.ChildrenSpawned
	s.ChildrenCompleted += o.ChildrenCompleted
	s.ChildrenErrored += o.ChildrenErrored
	s.ChildrenTruncated += o.ChildrenTruncated
	s.ChildrenDelayed += o.ChildrenDelayed
	s.ParentsSuspended += o.ParentsSuspended
	s.ParentsResumed += o.ParentsResumed
	s.ParentsFailed += o.ParentsFailed
	s.JoinsSuppressed += o.JoinsSuppressed
}
