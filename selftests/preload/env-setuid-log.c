// SPDX-License-Identifier: GPL-2.0
/*
 * H6: the environment of a set-user-ID program belongs to the user who
 * runs it. A root-owned 4755 copy of a one-socket program
 * (helpers/socket.c), run as nobody with VMA_LOG_FILE naming a file in a
 * directory only root may write, must not create it. And a VMA_* value
 * holding newlines is logged, if at all, as one line: a line of the log
 * that does not start with "vmak " was written by whoever set the value.
 *
 * Plain, the program is the one built without libvmak; preloaded (that
 * is, with libvmak in this process), the one linked with libvmak.a, since
 * the dynamic linker drops LD_PRELOAD for set-user-ID programs.
 */
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "pt.h"

#define NOBODY 65534

static char dir[] = "/tmp/vmak-h6.XXXXXX";

/* Run prog with env as uid (-1: as we are); its stdout into out. */
static int run_as(const char *prog, int uid, char *const env[], char *out,
		  size_t outlen)
{
	char *const argv[] = { (char *)prog, NULL };
	int p[2], st;
	ssize_t n, len = 0;
	pid_t pid;

	if (pipe(p))
		pt_die("pipe");
	pid = fork();
	if (pid < 0)
		pt_die("fork");
	if (!pid) {
		dup2(p[1], STDOUT_FILENO);
		if (uid >= 0 && (setgroups(0, NULL) || setgid((gid_t)uid) ||
				 setuid((uid_t)uid)))
			_exit(126);
		execve(prog, argv, env);
		_exit(127);
	}
	close(p[1]);
	while (len < (ssize_t)outlen - 1 &&
	       (n = read(p[0], out + len, outlen - 1 - (size_t)len)) > 0)
		len += n;
	out[len] = 0;
	close(p[0]);
	waitpid(pid, &st, 0);
	return st;
}

static void copy(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), o;
	ssize_t n;

	o = open(to, O_WRONLY | O_CREAT | O_EXCL, 0755);
	if (in < 0 || o < 0)
		pt_die("copy %s", from);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(o, buf, (size_t)n) != n)
			pt_die("write %s", to);
	close(in);
	close(o);
}

static void cleanup(const char *prog, const char *secret, const char *pwned,
		    const char *log)
{
	unlink(pwned);
	rmdir(secret);
	unlink(prog);
	unlink(log);
	rmdir(dir);
}

int main(void)
{
	char exe[4096], helper[4200], prog[128], secret[128], pwned[160], log[128];
	char env_log[200], out[256], line[1024];
	char env_poll[] = "VMA_RX_POLL=x\n/tmp/evil.so\n#";
	char *env[] = { env_log, env_poll, "PATH=/usr/bin:/bin", NULL };
	bool linked = pt_vmak_loaded(), named = false, forged = false;
	ssize_t n;
	FILE *f;
	int st;

	pt_init(20);
	if (geteuid()) {
		pt_ok(true, "# SKIP needs root (a set-user-ID root program run by nobody)");
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		pt_die("/proc/self/exe");
	exe[n] = 0;
	snprintf(helper, sizeof(helper), "%s/../preload-helpers/socket-%s",
		 dirname(exe), linked ? "linked" : "plain");
	if (!mkdtemp(dir) || chmod(dir, 0755))
		pt_die("%s", dir);
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	snprintf(secret, sizeof(secret), "%s/secret", dir);
	snprintf(pwned, sizeof(pwned), "%s/pwned", secret);
	snprintf(log, sizeof(log), "%s/log", dir);
	copy(helper, prog);
	if (chown(prog, 0, 0) || chmod(prog, 04755) || mkdir(secret, 0700))
		pt_die("%s", prog);

	/* set-user-ID root, run by nobody */
	snprintf(env_log, sizeof(env_log), "VMA_LOG_FILE=%s", pwned);
	st = run_as(prog, NOBODY, env, out, sizeof(out));
	if (st || strncmp(out, "euid 0 ", 7)) {
		pt_ok(true, "# SKIP the set-user-ID program did not run as root (status %#x, said \"%.40s\"): a nosuid mount?",
		      st, out);
		cleanup(prog, secret, pwned, log);
		return 0;
	}
	pt_ok(access(pwned, F_OK) && errno == ENOENT,
	      "a set-user-ID root program run by nobody creates no file VMA_LOG_FILE names (%s)",
	      linked ? "linked with libvmak.a" : "without libvmak");

	/* not set-user-ID: the value with newlines, in the log */
	if (chmod(prog, 0755))
		pt_die("%s", prog);
	snprintf(env_log, sizeof(env_log), "VMA_LOG_FILE=%s", log);
	st = run_as(prog, -1, env, out, sizeof(out));
	if (st)
		pt_die("%s: status %#x", prog, st);
	f = fopen(log, "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "vmak ", 5))
			forged = true;
		if (strstr(line, "VMA_RX_POLL"))
			named = true;
	}
	if (f)
		fclose(f);
	pt_ok(!forged, "a VMA_RX_POLL value with newlines adds no line of its own to the log");
	if (linked)
		pt_ok(named, "the log names VMA_RX_POLL, whose value is no integer");
	cleanup(prog, secret, pwned, log);
	return 0;
}
