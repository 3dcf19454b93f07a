package main

import (
	"fmt"
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// netnsEnv marks a clientbench re-executed in a network namespace of its own.
const netnsEnv = "CLIENTBENCH_NETNS"

// privateNetns reports whether this process runs in the network namespace
// inNetns made for it.
func privateNetns() bool { return os.Getenv(netnsEnv) == "1" }

// inNetns re-runs clientbench with the same arguments in a new network
// namespace (unshare --net --map-root-user), so that the TCP counters of
// /proc/net/snmp count only its own loopback traffic, and exits with its
// status. It returns (doing nothing) where that is not permitted.
func inNetns() {
	if privateNetns() || exec.Command("unshare", "--net", "--map-root-user", "true").Run() != nil {
		return
	}
	self, err := os.Executable()
	if err != nil {
		return
	}
	cmd := exec.Command("unshare", append([]string{"--net", "--map-root-user", self}, os.Args[1:]...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), netnsEnv+"=1")
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			os.Exit(ee.ExitCode())
		}
		fmt.Fprintln(os.Stderr, "clientbench:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// loopbackUp brings up the loopback interface, down in a new namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("read the flags of lo: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	return nil
}
