//go:build !unix

package master

import "os/exec"

// killGroupOnCancel keeps exec's default (kill the process) where process
// groups do not exist; WaitDelay still bounds the wait.
func killGroupOnCancel(*exec.Cmd) {}
