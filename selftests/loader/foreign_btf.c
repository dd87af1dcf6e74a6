// SPDX-License-Identifier: GPL-2.0
/*
 * The types of "another kernel", for a --btf that names a task_struct (the
 * loader's check) and nothing else steptime's CO-RE reads: built with -g
 * and encoded by pahole into foreign.btf beside the loader's tests.
 */
struct task_struct {
	int pid;
	int tgid;
};

struct task_struct foreign_task;
