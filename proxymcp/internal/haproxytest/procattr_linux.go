package haproxytest

import "syscall"

// childAttr makes the kernel stop haproxy if this process dies without
// stopping it (a crashed test, a killed playground), so nothing is left running.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}

// ExitWithParent asks the kernel to send SIGTERM to this process when its
// parent exits (for example "go run" killed with SIGTERM, which does not
// relay the signal). It returns an error when the request failed.
func ExitWithParent() error {
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0)
	if errno != 0 {
		return errno
	}
	return nil
}
