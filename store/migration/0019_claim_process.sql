-- The instance of a claim's owning process, beside its pid: the kernel's boot
-- id and the process's start time (/proc/PID/stat's starttime, in clock
-- ticks since boot), so that a claim whose pid a new process holds again (a
-- container's pid 1 restarted, a reused pid) is known to be gone. '' in
-- claims written before it was kept, and where /proc cannot tell: such a
-- claim is judged by its pid alone.
ALTER TABLE sweep_locks ADD COLUMN process TEXT NOT NULL DEFAULT '';
