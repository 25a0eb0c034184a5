package program

import (
	"os/exec"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// On Windows the program and whatever it starts are one job object (the
// process group of the other OSes), killed whole on a timeout, when the
// run is interrupted, and when the program has exited. The program is put
// in its job the moment after it starts: a process it starts before that
// is not in it.

// jobs holds the job of each running program (*exec.Cmd → windows.Handle).
var jobs sync.Map

// newGroup does nothing on Windows: the job is made once the program runs
// (joinGroup).
func newGroup(*exec.Cmd) {}

// joinGroup puts the started program in a job of its own that ends what
// is in it when killed or closed. Without one (a job that may not be
// nested), killGroup kills the program alone.
func joinGroup(cmd *exec.Cmd) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	_, err = windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation, uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
	if err == nil {
		var p windows.Handle
		if p, err = windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid)); err == nil {
			err = windows.AssignProcessToJobObject(job, p)
			windows.CloseHandle(p)
		}
	}
	if err != nil {
		windows.CloseHandle(job)
		return
	}
	jobs.Store(cmd, job)
}

// killGroup kills the program's job: the program and what it started.
func killGroup(cmd *exec.Cmd) error {
	if j, ok := jobs.LoadAndDelete(cmd); ok {
		job := j.(windows.Handle)
		err := windows.TerminateJobObject(job, 1)
		windows.CloseHandle(job)
		if err == nil {
			return nil
		}
	}
	return cmd.Process.Kill()
}
