//go:build !linux

package haproxytest

import "syscall"

func childAttr() *syscall.SysProcAttr { return nil }

// ExitWithParent is a no-op outside Linux.
func ExitWithParent() error { return nil }
