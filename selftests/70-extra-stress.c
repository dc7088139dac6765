// SPDX-License-Identifier: GPL-2.0
/*
 * A randomized stress of libvma's extra API (issue 38), on the library
 * built with ASan+UBSan: the program re-executes itself with
 * LD_PRELOAD="<the ASan runtime> build/asan/libvmak.so" (the runtime first,
 * as selftests/preload/run --asan does; the Makefile builds that library
 * with the selftests and names the runtime). VMAK_STRESS_LIB=plain runs it
 * on build/libvmak.so instead (quicker, for chasing a finding).
 *
 * Four threads share eight fd slots (sockets bound in netns sb, as user
 * nobody, fed across the veth by a sender in sa that streams datagrams to
 * every live socket's port) and two epoll sets, and do at random:
 *
 *   recvfrom_zcopy() (buffers of every size, MSG_VMA_ZCOPY_FORCE, blocking
 *     or not), free_packets() of what they hold (one, several, the 8-byte
 *     id form), recv/recvmsg/recvmmsg/read, poll/select/epoll_wait (and the
 *     ring fd), register_recv_callback() (installed and removed), and with
 *     VMA_SOCKETXTREME=1 socketxtreme_poll() on a socket, the ring and an
 *     epoll fd, socketxtreme_ref_vma_buff(), socketxtreme_free_vma_buff()
 *     and socketxtreme_free_vma_packets();
 *   the receive callback returns DROP, RECV or HOLD at random, and now and
 *     then calls recv(), close(), dup2(), epoll_ctl() or removes itself;
 *   close(), dup(), dup2() and new sockets in the shared slots, and
 *     epoll_ctl() ADD/MOD/DEL of them, while the others use them.
 *
 * What must hold (any miss fails the test, with the thread's last
 * operations):
 *
 *   no crash, no sanitizer report (halt_on_error), no hang: a watchdog
 *     fails the test when no operation finishes for 20 s, naming what each
 *     thread is in, its last operations and its stack;
 *   every datagram handed out (copied, zero copy, to a callback, as a
 *     completion) is one the sender sent, whole, with vma_info_t true to
 *     it; a held chunk keeps its payload until it is freed;
 *   no chunk is handed out twice while held, freeing what a live socket
 *     holds succeeds, the reference counts are what the program took;
 *   audits (all threads stopped at a write lock, about every 75
 *     operations): every free of a chunk nobody holds fails (free_packets()
 *     on every live socket: ENOENT or EINVAL; the socketXtreme calls:
 *     EINVAL), so nothing is given back twice;
 *   at the end, with every thread stopped, everything drained and freed
 *     and every socket closed: a burst of VMA_RX_WRE (128) datagrams to a
 *     new socket comes through the ring whole, without a copy
 *     (MSG_VMA_ZCOPY set; with socketXtreme nothing reached the kernel
 *     socket), every sequence number once, twice over: the FILL ring has
 *     every chunk, none lost, none twice; freeing each again fails; the
 *     library's own count of held packets (dump_fd_stats()) is 0.
 *
 * The bookkeeping that makes "nobody holds it" exact: every library call
 * of a thread runs under a shared lock that an audit takes exclusively;
 * what a call hands out is recorded before the thread lets go of it (a
 * callback's HOLD once the call that ran it returned); a socket is known
 * by its port (unique per socket, in every payload), and it holds its
 * chunks until its last fd is closed, all fd changes being made under one
 * mutex (a callback only tries it).
 *
 * Length: VMAK_STRESS_OPS operations per test (default 50,000), or
 * VMAK_STRESS_SECS seconds of them (default 40; 0: no limit), whichever
 * ends first. VMAK_STRESS_SEED repeats a run's choices (the threads still
 * interleave as they will); VMAK_STRESS_VARIANT=plain|socketxtreme runs
 * one of the two; VMAK_STRESS_SKIP=close,open,dup,epoll,cb,cbcalls,wait,
 * recv,racyfree,block,audit,xtref,small leaves those out, to narrow a
 * finding down. In the VM they come from the kernel command line:
 *
 *   VM_APPEND="VMAK_STRESS_OPS=200000" selftests/vm/run --kernel 6.1 -- 70-extra
 *
 * The long run, 1,000,000 operations per test, with time limits to match:
 *
 *   make stress-long            (KERNEL=6.1, STRESS_OPS=1000000)
 *
 * A hang report's stack lines are module(+offset): addr2line -f -i -e
 * build/asan/libvmak.so.<version> <offset - 1> names them.
 *
 * blocking_receive_ends_at_its_timeout holds the stress's first finding
 * alone (with socketXtreme, a blocking receive spun past SO_RCVTIMEO for
 * as long as the ring held datagrams for socketxtreme_poll()).
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <time.h>

#include "preload.h"
#include <mellanox/vma_extra.h>

#define NSLOT		8	/* shared fd slots */
#define SLOT_FD_MIN	200	/* slots' fds: numbers from here on */
#define NEP		2	/* epoll sets */
#define NTHR		4	/* threads */
#define WRE		128	/* VMA_RX_WRE: chunks of the ring */
#define PORT0		40000	/* socket k is bound to PORT0 + k */
#define NPORTS		20000	/* sockets a test may make */
#define HMAX		8	/* packets a thread holds before it frees */
#define HCAP		64
#define PCAP		16	/* a thread's callback HOLDs not yet recorded */
#define MAGIC		0x73786b76
#define WD_SECS		20	/* the watchdog: no progress this long (x5 on
				 * the debug kernel) */
#define DEF_OPS		50000
#define DEF_SECS	40

/* ---- the sender, in netns sa (its own process) ---- */

enum { S_IDLE, S_STREAM, S_BURST, S_QUIT };

struct shm {
	_Atomic int mode;
	_Atomic unsigned int gen;	/* the test bumps it after mode */
	_Atomic unsigned int ack;	/* the sender: gen seen (burst: sent) */
	_Atomic uint16_t ports[NSLOT];	/* the slots' ports, 0: empty */
	_Atomic uint16_t burst_port;
	_Atomic uint32_t burst_n;
	_Atomic uint64_t sent;
};

/* The payload: a header, then bytes that follow from the sequence. */
struct pay {
	uint32_t magic;
	uint16_t port;
	uint16_t len;
	uint32_t seq;
};

static void pay_fill(unsigned char *b, uint16_t port, uint32_t seq,
		     uint16_t len)
{
	struct pay h = { MAGIC, port, len, seq };
	uint16_t i;

	memcpy(b, &h, sizeof(h));
	for (i = sizeof(h); i < len; i++)
		b[i] = (unsigned char)(seq * 31 + i);
}

/*
 * avail bytes of a datagram at p: a header of ours and the bytes after it
 * (as many as there are); whole: avail is the datagram's length.
 */
static bool pay_ok(const void *p, size_t avail, bool whole, uint16_t *port,
		   uint32_t *seq)
{
	const unsigned char *b = p;
	struct pay h;
	size_t i;

	if (!p || avail < sizeof(h))
		return false;
	memcpy(&h, b, sizeof(h));
	if (h.magic != MAGIC || h.len < sizeof(h) || (whole && avail != h.len) ||
	    avail > h.len)
		return false;
	for (i = sizeof(h); i < avail; i++)
		if (b[i] != (unsigned char)(h.seq * 31 + i))
			return false;
	if (port)
		*port = h.port;
	if (seq)
		*seq = h.seq;
	return true;
}

static void sender_loop(struct shm *s, pid_t parent)
{
	struct sockaddr_in to = { .sin_family = AF_INET };
	unsigned char buf[256];
	unsigned int gen, k = 0, rnd = 7, idle = 0;
	uint32_t seq = 0, i, n;
	uint16_t port, len;
	int fd, mode;

	/* system calls of its own: the library is not what it tests */
	fd = (int)syscall(SYS_socket, AF_INET, SOCK_DGRAM, 0);
	inet_pton(AF_INET, ADDR_B, &to.sin_addr);
	for (;;) {
		/* the test gone (crashed, or the watchdog ended it): so are we */
		if (getppid() != parent)
			break;
		gen = atomic_load(&s->gen);	/* then mode: the order set */
		mode = atomic_load(&s->mode);
		if (mode == S_QUIT)
			break;
		if (mode == S_BURST && atomic_load(&s->ack) != gen) {
			n = atomic_load(&s->burst_n);
			to.sin_port = htons(atomic_load(&s->burst_port));
			for (i = 0; i < n; i++) {
				len = (uint16_t)(sizeof(struct pay) + i % 97);
				pay_fill(buf, ntohs(to.sin_port), i, len);
				syscall(SYS_sendto, fd, buf, len, 0, &to, sizeof(to));
				if (i % 16 == 15)
					usleep(1000);
			}
			atomic_store(&s->ack, gen);
			continue;
		}
		if (mode != S_STREAM) {
			atomic_store(&s->ack, gen);
			usleep(500);
			continue;
		}
		atomic_store(&s->ack, gen);
		port = atomic_load(&s->ports[k++ % NSLOT]);
		if (!port) {
			if (++idle >= NSLOT) {
				idle = 0;
				usleep(1000);
			}
			continue;
		}
		idle = 0;
		rnd = rnd * 1103515245 + 12345;
		len = (uint16_t)(sizeof(struct pay) + (rnd >> 16) % 180);
		pay_fill(buf, port, seq++, len);
		to.sin_port = htons(port);
		syscall(SYS_sendto, fd, buf, len, 0, &to, sizeof(to));
		atomic_fetch_add(&s->sent, 1);
		if (seq % 2 == 0)
			usleep(200);
	}
	_exit(0);
}

static _Atomic uint64_t progress;	/* for the watchdog */

/* Set the sender's mode and wait (up to secs) until it has seen it. */
static bool sender_mode(struct shm *s, int mode, int secs)
{
	unsigned int gen;
	int i;

	atomic_store(&s->mode, mode);
	gen = atomic_fetch_add(&s->gen, 1) + 1;
	for (i = 0; i < secs * 1000; i++) {
		if (atomic_load(&s->ack) == gen)
			return true;
		usleep(1000);
		if (!(i % 1000))
			atomic_fetch_add(&progress, 1);
	}
	return false;
}

/* ---- the library under test, ASan's ---- */

#ifndef VMAK_LINKED
/*
 * Before preload.h's constructor (which preloads build/libvmak.so): the
 * ASan runtime and build/asan/libvmak.so, unless VMAK_STRESS_LIB=plain.
 */
__attribute__((constructor(101))) static void stress_reexec(int argc,
							     char **argv)
{
#ifdef VMAK_ASAN_RT
	char exe[PATH_MAX], lib[PATH_MAX + 32], pre[2 * PATH_MAX + 64], *p;
	const char *mode = getenv("VMAK_STRESS_LIB");
	ssize_t n;

	if (getenv("LD_PRELOAD") || (mode && !strcmp(mode, "plain")) ||
	    (argc > 1 && !strcmp(argv[1], "exec-child")))
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return;
	exe[n] = 0;
	snprintf(lib, sizeof(lib), "%s", exe);
	p = strrchr(lib, '/');		/* build/selftests/70-... */
	if (!p)
		return;
	*p = 0;
	p = strrchr(lib, '/');
	if (!p)
		return;
	strcpy(p, "/asan/libvmak.so");
	if (access(lib, R_OK) || access(VMAK_ASAN_RT, R_OK))
		return;		/* the test fails: not the ASan library */
	snprintf(pre, sizeof(pre), "%s %s", VMAK_ASAN_RT, lib);
	setenv("LD_PRELOAD", pre, 1);
	/* the program is not built with ASan: LeakSanitizer would list
	 * what the C library keeps
	 */
	setenv("ASAN_OPTIONS", "detect_leaks=0:halt_on_error=1:abort_on_error=0", 0);
	setenv("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1", 0);
	execv(exe, argv);
#else
	(void)argc;
	(void)argv;
#endif
}
#endif

/* ---- shared state (each test is a process of its own) ---- */

static struct vma_api_t *api;
static bool xt_mode;
static int eps[NEP];
static _Atomic int ring_fd = -1;
static struct shm *shm;

/* The slots: fd (read without a lock by the racy calls) and socket. */
static pthread_mutex_t fdmu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int slot_fd[NSLOT];
static int slot_sid[NSLOT];		/* fdmu */
static int nfds[NPORTS];		/* fdmu: fds of socket k */
static _Atomic bool alive[NPORTS];	/* written under fdmu */
static int next_sid;			/* fdmu */
static uint64_t closed_at[NPORTS];	/* fdmu: gseq at its last fd's close */

/* Every library call of a thread under rd; an audit takes wr. */
static pthread_rwlock_t world;

static _Atomic bool stop;
static _Atomic uint64_t ops_done;
static uint64_t ops_target;

/* What went wrong, first few, for the report. */
static _Atomic int nfail;
static char failmsg[6][400];

/* Counts, for the report. */
enum { C_ZC, C_COPY, C_FREE, C_RFREE, C_XTPKT, C_XTREF, C_XTFREE, C_CB,
       C_CBHOLD, C_CBRECV, C_CBDROP, C_CBCLOSE, C_CBCALL, C_CLOSE, C_OPEN,
       C_DUP, C_EPCTL, C_AUDIT, C_STALE, C_NCOUNT };
static const char *const cnames[C_NCOUNT] = {
	"zero-copy", "copies", "frees", "racy frees", "xt packets", "xt refs",
	"xt frees", "callbacks", "HOLD", "RECV", "DROP", "closes in callbacks",
	"calls in callbacks", "closes", "sockets", "dups", "epoll_ctl",
	"audits", "stale frees refused",
};
static _Atomic uint64_t cnt[C_NCOUNT];

static void count(int c)
{
	atomic_fetch_add_explicit(&cnt[c], 1, memory_order_relaxed);
}

/*
 * Diagnostics go straight to fd 2 by system call: neither through the
 * library's write() (a library that hangs must not silence its report)
 * nor through stdio's locks.
 */
static void rawf(const char *fmt, ...)
{
	char buf[600];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = (int)sizeof(buf) - 1;
	if (n > 0 && syscall(SYS_write, 2, buf, (size_t)n) < 0)
		return;
}

/* Operations left out (VMAK_STRESS_SKIP), to narrow down a finding. */
enum { K_CLOSE = 1, K_OPEN = 2, K_DUP = 4, K_EPOLL = 8, K_CB = 16,
       K_CBCALLS = 32, K_WAIT = 64, K_RECV = 128, K_RACYFREE = 256,
       K_BLOCK = 512, K_AUDIT = 1024, K_XTREF = 2048, K_SMALL = 4096 };
static const char *const knames[] = { "close", "open", "dup", "epoll", "cb",
	"cbcalls", "wait", "recv", "racyfree", "block", "audit", "xtref",
	"small", NULL };
static unsigned int skip;

static unsigned int parse_skip(const char *v)
{
	unsigned int m = 0, i;

	for (i = 0; v && knames[i]; i++) {
		const char *p = strstr(v, knames[i]);
		size_t l = strlen(knames[i]);

		/* a whole name of the comma-separated list */
		while (p && ((p > v && p[-1] != ',') || (p[l] && p[l] != ',')))
			p = strstr(p + 1, knames[i]);
		if (p)
			m |= 1U << i;
	}
	return m;
}

/* ---- threads: random numbers, what they hold, their last operations ---- */

struct held {
	void *id;		/* packet id, or the vma_buff_t */
	int sid;		/* the socket holding it; -1: socketXtreme's */
	uint32_t refs;		/* socketXtreme: references taken */
	const void *pay;	/* its payload, to check before the free */
	uint16_t len;
	uint32_t seq;
	bool chk;		/* pay is there to check */
	int rfd;		/* received on (for a report) */
	uint64_t at;		/* when (gseq) */
	struct vma_packet_desc_t desc;
};

struct tr {
	const char *op;
	int fd, rc, err;
	const void *p;
	uint64_t t0, t1;	/* the global order: when it began, ended */
};

static _Atomic uint64_t gseq;	/* orders the threads' operations */

#define NTR	64

struct worker {
	int idx, tid;
	pthread_t th;
	uint64_t rng;
	struct held h[HCAP];
	int nh;
	struct held pend[PCAP];
	int npend;
	_Atomic(const char *) cur;	/* the operation it is in */
	_Atomic int cur_fd;
	uint64_t cur_t0;
	struct tr tr[NTR];
	_Atomic unsigned int ntr;
};

static struct worker workers[NTHR + 1];	/* the last: the test's own */
static __thread struct worker *me;

static uint32_t rnd(struct worker *w)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return (uint32_t)(w->rng >> 32);
}

static uint32_t below(struct worker *w, uint32_t n)
{
	return n ? rnd(w) % n : 0;
}

static void begin(struct worker *w, const char *op, int fd)
{
	w->cur_t0 = atomic_fetch_add(&gseq, 1);
	atomic_store_explicit(&w->cur_fd, fd, memory_order_relaxed);
	atomic_store_explicit(&w->cur, op, memory_order_release);
}

static void trace(struct worker *w, const char *op, int fd, int rc,
		  const void *p)
{
	unsigned int i = atomic_fetch_add(&w->ntr, 1) % NTR;

	w->tr[i] = (struct tr){ op, fd, rc, rc < 0 ? errno : 0, p, w->cur_t0,
				atomic_fetch_add(&gseq, 1) };
}

static void dump_trace(struct worker *w, unsigned int last)
{
	unsigned int n = atomic_load(&w->ntr), i;
	const char *cur = atomic_load(&w->cur);

	rawf("#   thread %d (task %d), now in %s (fd %d); its last operations:\n",
	     w->idx, w->tid, cur ? cur : "nothing", atomic_load(&w->cur_fd));
	for (i = n > last ? n - last : 0; i < n; i++) {
		struct tr *t = &w->tr[i % NTR];

		rawf("#     [%llu-%llu] %s(fd %d) = %d%s%s %p\n",
		     (unsigned long long)t->t0, (unsigned long long)t->t1, t->op,
		     t->fd, t->rc, t->rc < 0 ? " " : "",
		     t->rc < 0 ? strerror(t->err) : "", t->p);
	}
}

static void dump_all(void)
{
	int i;

	for (i = 0; i <= NTHR; i++)
		dump_trace(&workers[i], 24);
}

static void failf(struct worker *w, const char *fmt, ...)
{
	int k = atomic_fetch_add(&nfail, 1), i;
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (k < 6)
		memcpy(failmsg[k], msg, sizeof(msg));
	rawf("# FAIL (thread %d): %s\n", w ? w->idx : -1, msg);
	if (w && !k) {
		/* the first: every thread's, what ran beside it */
		dump_trace(w, 40);
		for (i = 0; i <= NTHR; i++)
			if (&workers[i] != w)
				dump_trace(&workers[i], 40);
	} else if (w && k < 3) {
		dump_trace(w, 24);
	}
	atomic_store(&stop, true);
}

/* A sanitizer's report ends the process: say what the threads did. */
static void on_sanitizer_death(void)
{
	rawf("# the library died under the sanitizer; the threads' last operations:\n");
	dump_all();
}

static pthread_t main_th;
static pid_t sender_pid;

/* SIGUSR2 from the watchdog: this thread's stack, then wait for the end. */
static void stack_handler(int sig)
{
	void *b[64];
	int n;

	(void)sig;
	rawf("#   stack of thread %d (task %ld):\n", me ? me->idx : -1,
	     (long)syscall(SYS_gettid));
	/*
	 * module(+offset), for addr2line; not ASan's own printer, whose
	 * symbolizer may wait on what the hung threads hold
	 */
	n = backtrace(b, 64);
	backtrace_symbols_fd(b, n, 2);
	for (;;)
		pause();
}

/* The C library's own sigaction(), past the library's and ASan's. */
static void stack_handler_install(void)
{
	struct sigaction sa = { .sa_handler = stack_handler };
	int (*fn)(int, const struct sigaction *, struct sigaction *) = NULL;
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

	if (libc)
		fn = (int (*)(int, const struct sigaction *, struct sigaction *))
			dlsym(libc, "sigaction");
	sigemptyset(&sa.sa_mask);
	if (fn)
		fn(SIGUSR2, &sa, NULL);
	else
		sigaction(SIGUSR2, &sa, NULL);
}

/* A file's first line, read by system calls (not the library's). */
static int raw_line(const char *path, char *buf, size_t len)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	long n;

	buf[0] = 0;
	if (fd < 0)
		return -1;
	n = syscall(SYS_read, fd, buf, len - 1);
	syscall(SYS_close, fd);
	buf[n > 0 ? n : 0] = 0;
	if (strchr(buf, '\n'))
		*strchr(buf, '\n') = 0;
	return 0;
}

/* Each thread of the process: its state, where it sleeps, its call. */
static void dump_tasks(void)
{
	char dents[8192], path[96], stat[512], wchan[128], sc[256], *p;
	int d = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/task",
			     O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long n, off;

	if (d < 0)
		return;
	while ((n = syscall(SYS_getdents64, d, dents, sizeof(dents))) > 0) {
		for (off = 0; off < n;) {
			struct { uint64_t ino; int64_t off; unsigned short len;
				 unsigned char type; char name[]; } *e =
				(void *)(dents + off);

			off += e->len;
			if (e->name[0] < '0' || e->name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->name);
			raw_line(path, stat, sizeof(stat));
			p = strrchr(stat, ')');
			snprintf(path, sizeof(path), "/proc/self/task/%s/wchan", e->name);
			raw_line(path, wchan, sizeof(wchan));
			snprintf(path, sizeof(path), "/proc/self/task/%s/syscall", e->name);
			raw_line(path, sc, sizeof(sc));
			rawf("#   task %s: state %c, in %s, system call %s\n", e->name,
			     p && p[1] && p[2] ? p[2] : '?', wchan, sc);
		}
	}
	syscall(SYS_close, d);
}

static void *watchdog(void *arg)
{
	_Atomic bool *done = arg;
	uint64_t last = atomic_load(&progress), now;
	int still = 0, limit = WD_SECS * (__vmak_debug_kernel() ? 5 : 1);

	while (!atomic_load(done)) {
		sleep(1);
		now = atomic_load(&progress);
		if (now != last) {
			last = now;
			still = 0;
			continue;
		}
		if (++still < limit)
			continue;
		rawf("# FAIL: hang: no operation finished in %d s\n", limit);
		dump_all();
		dump_tasks();
		for (still = 0; still <= NTHR; still++) {
			pthread_t t = still < NTHR ? workers[still].th : main_th;

			if (t && !pthread_kill(t, SIGUSR2))
				usleep(700000);
		}
		if (sender_pid > 0)
			kill(sender_pid, SIGKILL);
		_exit(3);
	}
	return NULL;
}

/* ---- the registry: who holds which chunk ---- */

#define REG_SIZE	8192
#define NH		4

struct ent {
	void *id;
	uint8_t nh;
	struct { int sid; uint32_t refs; } h[NH];
	uint32_t outs;		/* times handed out */
	/* the last hand-out and the last return, for a report */
	int last_sid, last_thr, back_thr;
	uint64_t last_at, back_at;
	const char *back_how;
};

static pthread_mutex_t regmu = PTHREAD_MUTEX_INITIALIZER;
static struct ent reg[REG_SIZE];

static struct ent *reg_get(void *id)
{
	uint64_t x = (uint64_t)(uintptr_t)id * 0x9e3779b97f4a7c15ULL;
	uint32_t i = (uint32_t)(x >> 51), k;

	for (k = 0; k < REG_SIZE; k++, i = (i + 1) % REG_SIZE) {
		if (reg[i].id == id)
			return &reg[i];
		if (!reg[i].id) {
			reg[i].id = id;
			return &reg[i];
		}
	}
	return NULL;
}

/* A holder that still holds: socketXtreme's with references, a socket's
 * while the socket lives (at its end the library takes the chunk back).
 */
static bool live(const struct ent *e, int k)
{
	return e->h[k].sid < 0 ? e->h[k].refs > 0 : atomic_load(&alive[e->h[k].sid]);
}

static int live_holders(const struct ent *e)
{
	int k, n = 0;

	for (k = 0; k < e->nh; k++)
		n += live(e, k);
	return n;
}

/*
 * id was handed out, to socket sid (its chunk held until freed or the
 * socket's end; caller holds fdmu and saw sid alive) or as a
 * socketXtreme packet (sid -1). Nobody may hold it already.
 */
static void reg_take(struct worker *w, void *id, int sid)
{
	struct ent *e;
	int k, j;

	pthread_mutex_lock(&regmu);
	e = reg_get(id);
	if (!e) {
		pthread_mutex_unlock(&regmu);
		failf(w, "more than %d packet ids", REG_SIZE);
		return;
	}
	for (k = j = 0; k < e->nh; k++) {
		if (live(e, k)) {
			failf(w, "chunk %p handed out (to %s %d) while %s %d holds it (%u refs): given out twice",
			      id, sid < 0 ? "socketXtreme" : "port", sid < 0 ? 0 : PORT0 + sid,
			      e->h[k].sid < 0 ? "socketXtreme" : "port",
			      e->h[k].sid < 0 ? 0 : PORT0 + e->h[k].sid, e->h[k].refs);
			e->h[j++] = e->h[k];
		}
	}
	e->nh = (uint8_t)j;
	if (e->nh < NH) {
		e->h[e->nh].sid = sid;
		e->h[e->nh++].refs = 1;
	}
	e->outs++;
	e->last_sid = sid;
	e->last_thr = w ? w->idx : -1;
	e->last_at = atomic_load(&gseq);
	pthread_mutex_unlock(&regmu);
}

/* One reference of holder sid less (a socket's: it goes); the count left. */
static int reg_put(void *id, int sid)
{
	struct ent *e;
	int k, left = -1;

	pthread_mutex_lock(&regmu);
	e = reg_get(id);
	for (k = 0; e && k < e->nh; k++) {
		if (e->h[k].sid != sid || !e->h[k].refs)
			continue;
		left = (int)--e->h[k].refs;
		if (!left) {
			e->h[k] = e->h[--e->nh];
			e->back_how = "freed";
			e->back_thr = me ? me->idx : -1;
			e->back_at = atomic_load(&gseq);
		}
		break;
	}
	pthread_mutex_unlock(&regmu);
	return left;
}

static void reg_ref(void *id)
{
	struct ent *e;
	int k;

	pthread_mutex_lock(&regmu);
	e = reg_get(id);
	for (k = 0; e && k < e->nh; k++)
		if (e->h[k].sid < 0 && e->h[k].refs) {
			e->h[k].refs++;
			break;
		}
	pthread_mutex_unlock(&regmu);
}

/* ---- slots and sockets (fdmu) ---- */

static int fd_of(int sid)
{
	int i, fd;

	for (i = 0; i < NSLOT; i++) {
		fd = atomic_load(&slot_fd[i]);
		if (fd >= 0 && slot_sid[i] == sid)
			return fd;
	}
	return -1;
}

static void slot_set(int i, int fd, int sid)
{
	int old = atomic_load(&slot_fd[i]) >= 0 ? slot_sid[i] : -1;

	if (fd >= 0)
		nfds[sid]++;
	atomic_store(&slot_fd[i], fd);
	slot_sid[i] = fd >= 0 ? sid : -1;
	atomic_store(&shm->ports[i], fd >= 0 ? (uint16_t)(PORT0 + sid) : 0);
	/* its last fd: the socket's end */
	if (old >= 0 && !--nfds[old]) {
		atomic_store(&alive[old], false);
		closed_at[old] = atomic_load(&gseq);
	}
}

static int racy_fd(struct worker *w)
{
	int i, fd = -1;

	for (i = 0; i < 3 && fd < 0; i++)
		fd = atomic_load(&slot_fd[below(w, NSLOT)]);
	return fd;
}

static int live_slot(struct worker *w)
{
	int i, s = (int)below(w, NSLOT);

	for (i = 0; i < NSLOT; i++, s = (s + 1) % NSLOT)
		if (atomic_load(&slot_fd[s]) >= 0)
			return s;
	return -1;
}

static vma_recv_callback_retval_t stress_cb(int fd, size_t sz_iov,
					    struct iovec iov[],
					    struct vma_info_t *info, void *ctx);
static int cbctx[NSLOT];

/* A new socket in an empty slot (fdmu). */
static void open_socket(struct worker *w)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct timeval tv = { 0, 10000 };
	int i, s = -1, fd, sid;
	uint64_t ud;

	for (i = 0; i < NSLOT && s < 0; i++)
		if (atomic_load(&slot_fd[i]) < 0)
			s = i;
	if (s < 0 || next_sid >= NPORTS)
		return;
	sid = next_sid++;
	begin(w, "socket", -1);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		trace(w, "socket", -1, fd, NULL);
		return;
	}
	/*
	 * Slots' fds live at SLOT_FD_MIN and up, numbers a new file never
	 * gets by itself (the lowest free one is far below): a call on a
	 * slot's number after its close meets nothing, or a later slot's
	 * socket put there on purpose, never a file the C library or
	 * libvmak opened meanwhile (a netlink socket inside bind(), an
	 * eventfd on its way up): reading those is the program's own bug.
	 */
	i = fcntl(fd, below(w, 2) ? F_DUPFD : F_DUPFD_CLOEXEC, SLOT_FD_MIN);
	if (i < 0) {
		failf(w, "F_DUPFD of a new socket: %s", strerror(errno));
		close(fd);
		return;
	}
	close(fd);
	fd = i;
	inet_pton(AF_INET, ADDR_B, &a.sin_addr);
	a.sin_port = htons((uint16_t)(PORT0 + sid));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		trace(w, "bind", fd, -1, NULL);
		close(fd);
		return;
	}
	/* blocking receives wait 10 ms at most */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ud = (uint64_t)sid;
	setsockopt(fd, SOL_SOCKET, SO_VMA_USER_DATA, &ud, sizeof(ud));
	if (!below(w, 3) && !(skip & K_CB))
		api->register_recv_callback(fd, stress_cb, &cbctx[s]);
	atomic_store(&alive[sid], true);
	slot_set(s, fd, sid);
	trace(w, "socket", fd, sid, NULL);
	count(C_OPEN);
}

static void close_slot(struct worker *w, int s)
{
	int fd = atomic_load(&slot_fd[s]), rc;

	begin(w, "close", fd);
	rc = close(fd);
	trace(w, "close", fd, rc, NULL);
	if (rc)
		failf(w, "close(%d) of a slot's socket: %s", fd, strerror(errno));
	slot_set(s, -1, -1);
}

/* dup2() of slot a's fd over slot b's, or dup() into b if it is empty. */
static void dup_slot(struct worker *w, int a, int b)
{
	int fa = atomic_load(&slot_fd[a]), fb = atomic_load(&slot_fd[b]), rc;

	if (fa < 0 || a == b)
		return;
	begin(w, "dup2", fb);
	if (fb >= 0)
		rc = dup2(fa, fb);
	else	/* dup(), at SLOT_FD_MIN and up */
		rc = fcntl(fa, below(w, 2) ? F_DUPFD : F_DUPFD_CLOEXEC,
			   SLOT_FD_MIN);
	trace(w, fb >= 0 ? "dup2" : "dup", fa, rc, NULL);
	if (rc < 0) {
		failf(w, "dup of slot fd %d: %s", fa, strerror(errno));
		return;
	}
	slot_set(b, rc, slot_sid[a]);
	count(C_DUP);
}

/* ---- recording what a call handed out ---- */

static void push(struct worker *w, const struct held *h)
{
	if (w->nh < HCAP)
		w->h[w->nh++] = *h;
	else
		failf(w, "a thread holds more than %d packets", HCAP);
}

static void drop(struct worker *w, int i)
{
	w->h[i] = w->h[--w->nh];
}

/* A zero-copy packet of socket sid (it lives: fdmu held). */
static void took(struct worker *w, void *id, int sid, const void *pay,
		 uint16_t len, uint32_t seq, bool chk, int rfd)
{
	struct held h = { .id = id, .sid = sid, .refs = 1, .pay = pay,
			  .len = len, .seq = seq, .chk = chk, .rfd = rfd,
			  .at = w->cur_t0 };

	reg_take(w, id, sid);
	push(w, &h);
}

static int free_one(struct worker *w, int i);

/* What callbacks held during the thread's last call: recorded now. */
static void commit(struct worker *w)
{
	int i;

	if (!w->npend)
		return;
	pthread_mutex_lock(&fdmu);
	for (i = 0; i < w->npend; i++)
		if (atomic_load(&alive[w->pend[i].sid]))
			took(w, w->pend[i].id, w->pend[i].sid, w->pend[i].pay,
			     w->pend[i].len, w->pend[i].seq, true, w->pend[i].rfd);
	/* else its socket ended: the library took it back */
	pthread_mutex_unlock(&fdmu);
	w->npend = 0;
	while (w->nh > HMAX && !atomic_load(&stop))
		free_one(w, (int)below(w, (uint32_t)w->nh));
}

/* A held packet's payload is still what was sent. */
static void check_held(struct worker *w, const struct held *h)
{
	uint16_t port;
	uint32_t seq;

	if (h->chk && (!pay_ok(h->pay, h->len, true, &port, &seq) ||
		       seq != h->seq))
		failf(w, "held packet %p (port %d, seq %u, %u bytes) changed before it was freed: its chunk was reused",
		      h->id, h->sid < 0 ? -1 : PORT0 + h->sid, h->seq, h->len);
}

/* ---- freeing ---- */

struct idform {			/* vma_packet_t as free_packets() reads it */
	void *id;
	size_t sz_iov;
};

/*
 * After a free that failed: which slot's socket (if any) takes each of
 * the packets, and the slots as the test knows them (fdmu held).
 */
static void whose(struct worker *w, struct idform *arr, int n)
{
	int k, s, fd, rc, i;

	for (k = 0; k < n; k++)
		for (i = 0; i < w->nh; i++)
			if (w->h[i].id == arr[k].id)
				rawf("#   packet %p: %s fd %d at [%llu], seq %u, %u bytes\n",
				     arr[k].id, w->h[i].rfd >= -1 ? "received on" :
				     "held by a callback of", w->h[i].rfd >= -1 ?
				     w->h[i].rfd : -w->h[i].rfd - 2,
				     (unsigned long long)w->h[i].at, w->h[i].seq, w->h[i].len);
	for (s = 0; s < NSLOT; s++)
		rawf("#   slot %d: fd %d, port %d\n", s, atomic_load(&slot_fd[s]),
		     atomic_load(&slot_fd[s]) >= 0 ? PORT0 + slot_sid[s] : 0);
	for (k = 0; k < n; k++) {
		for (s = 0; s < NSLOT; s++) {
			fd = atomic_load(&slot_fd[s]);
			if (fd < 0)
				continue;
			rc = api->free_packets(fd, (struct vma_packet_t *)&arr[k].id, 1);
			if (!rc) {
				rawf("#   packet %p: freed on fd %d (port %d)\n", arr[k].id,
				     fd, PORT0 + slot_sid[s]);
				break;
			}
		}
		if (s == NSLOT)
			rawf("#   packet %p: no socket of a slot holds it\n", arr[k].id);
	}
	(void)w;
}

/*
 * Free held packet i: a socket's by free_packets() on one of its fds
 * (with others of the same socket, sometimes), socketXtreme's by
 * free_vma_buff() or free_vma_packets(). Each must succeed. Returns how
 * many went.
 */
static int free_one(struct worker *w, int i)
{
	struct idform arr[4];
	struct held *h = &w->h[i];
	int fd, rc, k, n = 0, sid = h->sid, pick[4];
	uint32_t before;

	if (sid < 0) {
		before = h->refs;
		if (before == 1)
			check_held(w, h);
		reg_put(h->id, -1);
		if (below(w, 2)) {
			begin(w, "xt_free_buff", -1);
			rc = api->socketxtreme_free_vma_buff(h->id);
			trace(w, "xt_free_buff", -1, rc, h->id);
			if (rc != (int)before - 1)
				failf(w, "socketxtreme_free_vma_buff(%p) with %u references: %d (%s), expected %u",
				      h->id, before, rc, rc < 0 ? strerror(errno) : "", before - 1);
		} else {
			begin(w, "xt_free_packets", -1);
			rc = api->socketxtreme_free_vma_packets(&h->desc, 1);
			trace(w, "xt_free_packets", -1, rc, h->id);
			if (rc)
				failf(w, "socketxtreme_free_vma_packets() of a packet held (%u references): %s",
				      before, strerror(errno));
		}
		count(C_XTFREE);
		if (!--h->refs)
			drop(w, i);
		return 1;
	}
	pthread_mutex_lock(&fdmu);
	if (!atomic_load(&alive[sid])) {
		pthread_mutex_unlock(&fdmu);
		drop(w, i);	/* its socket ended: the library's again */
		return 1;
	}
	fd = fd_of(sid);
	/* this one, and up to three more of the same socket */
	pick[n++] = i;
	for (k = 0; k < w->nh && n < 4 && below(w, 2); k++)
		if (k != i && w->h[k].sid == sid)
			pick[n++] = k;
	for (k = 0; k < n; k++) {
		check_held(w, &w->h[pick[k]]);
		arr[k] = (struct idform){ w->h[pick[k]].id, 0 };
		reg_put(arr[k].id, sid);
	}
	begin(w, "free_packets", fd);
	if (n == 1 && below(w, 2))	/* libvma's tests: 8-byte ids */
		rc = api->free_packets(fd, (struct vma_packet_t *)&arr[0].id, 1);
	else
		rc = api->free_packets(fd, (struct vma_packet_t *)arr, (size_t)n);
	trace(w, "free_packets", fd, rc, arr[0].id);
	if (rc) {
		failf(w, "free_packets(fd %d, %d packets from %p) that port %d holds: %s",
		      fd, n, arr[0].id, PORT0 + sid, strerror(errno));
		whose(w, arr, n);
	}
	pthread_mutex_unlock(&fdmu);
	count(C_FREE);
	/* drop from the highest index down: drop() moves the last */
	for (k = 0; k < n; k++) {
		int j, hi = 0;

		for (j = 1; j < n; j++)
			if (pick[j] > pick[hi])
				hi = j;
		drop(w, pick[hi]);
		pick[hi] = -1;
	}
	return n;
}

/* free_packets() on an fd of whatever socket it is now: may fail. */
static void free_racy(struct worker *w, int i)
{
	struct held *h = &w->h[i];
	int fd = racy_fd(w), rc, sid = h->sid;
	void *id = h->id;

	/*
	 * Its socket ended: the library took the chunk back and may have
	 * handed it to another socket since, whose fd this may be now. While
	 * the socket lives the chunk is its own, and a free on whatever fd
	 * can only give back ours (a chunk given back goes to the end of the
	 * FILL ring: it comes round again long after this).
	 */
	if (!atomic_load(&alive[sid])) {
		drop(w, i);
		return;
	}
	reg_put(id, sid);
	begin(w, "free_packets~", fd);
	rc = api->free_packets(fd, (struct vma_packet_t *)&id, 1);
	trace(w, "free_packets~", fd, rc, id);
	if (!rc) {
		count(C_RFREE);
		drop(w, i);
		return;
	}
	pthread_mutex_lock(&fdmu);
	if (atomic_load(&alive[sid]))
		reg_take(w, id, sid);	/* still its: back in the book */
	else
		drop(w, i);
	pthread_mutex_unlock(&fdmu);
}

/* ---- the callback ---- */

static vma_recv_callback_retval_t stress_cb(int fd, size_t sz_iov,
					    struct iovec iov[],
					    struct vma_info_t *info, void *ctx)
{
	struct worker *w = me;
	struct epoll_event ev = { .events = EPOLLIN };
	uint16_t port = 0;
	uint32_t seq = 0, r;
	char buf[512];
	int s, sid;

	(void)ctx;
	count(C_CB);
	if (!w)
		return VMA_PACKET_RECV;
	if (sz_iov != 1 || !iov || !info || info->struct_sz != sizeof(*info) ||
	    !info->packet_id || !info->dst || !info->src ||
	    info->payload_sz != iov[0].iov_len ||
	    !pay_ok(iov[0].iov_base, iov[0].iov_len, true, &port, &seq) ||
	    ntohs(info->dst->sin_port) != port ||
	    info->src->sin_addr.s_addr != htonl(0x0a080001)) {
		failf(w, "a callback (fd %d) got a datagram that is not what was sent (%zu pieces, %zu bytes, port %u)",
		      fd, sz_iov, iov ? iov[0].iov_len : 0, port);
		return VMA_PACKET_DROP;
	}
	sid = port - PORT0;
	r = skip & K_CBCALLS ? 100 : below(w, 100);
	/* now and then a call of the program's own */
	if (r < 6) {
		ssize_t n = recv(racy_fd(w), buf, sizeof(buf), MSG_DONTWAIT);

		if (n >= 0 && !pay_ok(buf, (size_t)n, true, NULL, NULL))
			failf(w, "recv() in a callback read %zd bytes that were not sent", n);
		count(C_CBCALL);
	} else if (r < 10 && !(skip & K_EPOLL)) {
		ev.data.fd = fd;
		epoll_ctl(eps[below(w, NEP)], below(w, 2) ? EPOLL_CTL_ADD :
			  EPOLL_CTL_DEL, fd, &ev);
		count(C_CBCALL);
	} else if (r < 13 && !pthread_mutex_trylock(&fdmu)) {
		/* its own socket's slot, or any */
		for (s = 0; s < NSLOT; s++)
			if (atomic_load(&slot_fd[s]) >= 0 && slot_sid[s] == sid)
				break;
		if (s == NSLOT || below(w, 3) == 0)
			s = live_slot(w);
		if (s >= 0 && below(w, 4) && !(skip & K_CLOSE))
			close_slot(w, s);
		else if (s >= 0 && !(skip & K_DUP))
			dup_slot(w, s, (int)below(w, NSLOT));
		pthread_mutex_unlock(&fdmu);
		count(C_CBCLOSE);
	} else if (r < 14) {
		api->register_recv_callback(fd, NULL, NULL);
		count(C_CBCALL);
	}
	switch (below(w, 3)) {
	case 0:
		count(C_CBDROP);
		return VMA_PACKET_DROP;
	case 1:
		count(C_CBRECV);
		return VMA_PACKET_RECV;
	}
	if (w->npend >= PCAP) {
		count(C_CBDROP);
		return VMA_PACKET_DROP;
	}
	/* recorded once the call that runs this has returned */
	w->pend[w->npend++] = (struct held){ .id = info->packet_id, .sid = sid,
		.refs = 1, .pay = iov[0].iov_base, .len = (uint16_t)iov[0].iov_len,
		.seq = seq, .chk = true, .rfd = -fd - 2 };
	count(C_CBHOLD);
	return VMA_PACKET_HOLD;
}

/* ---- the operations ---- */

/* A copy (recv and the like) of what the sender sent, or a part of it. */
static void check_copy(struct worker *w, const char *how, const void *buf,
		       ssize_t n, size_t room)
{
	if (n < 0)
		return;
	count(C_COPY);
	if (!pay_ok(buf, (size_t)n, (size_t)n < room, NULL, NULL))
		failf(w, "%s copied %zd bytes that were not sent", how, n);
}

/*
 * recvfrom_zcopy(): racy (an fd read without the lock; the packet's
 * socket known by its port) or on a slot under fdmu (any buffer size,
 * the socket known: the port must be its).
 */
static void op_zcopy(struct worker *w, bool racy)
{
	static const size_t lens[] = { 20, 24, 32, 40, 64, 256 };
	union { struct vma_packets_t p; char b[256]; } u;
	struct sockaddr_in from;
	socklen_t flen = sizeof(from);
	size_t len = racy || (skip & K_SMALL) ? 256 : lens[below(w, 6)];
	int fd, s = -1, flags, rc, sid = -1, in;
	uint16_t port = 0;
	uint32_t seq = 0;
	struct vma_packet_t *pk;
	bool chk = false;

	in = below(w, 4) || (skip & K_BLOCK) ? MSG_DONTWAIT : 0;
	if (!below(w, 4))
		in |= MSG_VMA_ZCOPY_FORCE;
	if (racy) {
		fd = racy_fd(w);
	} else {
		pthread_mutex_lock(&fdmu);
		s = live_slot(w);
		if (s < 0) {
			pthread_mutex_unlock(&fdmu);
			return;
		}
		fd = atomic_load(&slot_fd[s]);
		sid = slot_sid[s];
		in |= MSG_DONTWAIT;	/* never wait holding fdmu */
	}
	flags = in;
	begin(w, racy ? "recvfrom_zcopy~" : "recvfrom_zcopy", fd);
	rc = api->recvfrom_zcopy(fd, u.b, len, &flags,
				 below(w, 2) ? (struct sockaddr *)&from : NULL,
				 &flen);
	trace(w, racy ? "recvfrom_zcopy~" : "recvfrom_zcopy", fd, rc,
	      rc >= 0 && (flags & MSG_VMA_ZCOPY) ? u.p.pkts[0].packet_id : NULL);
	if (!racy && len < sizeof(struct vma_packets_t) + sizeof(struct vma_packet_t) &&
	    (rc != -1 || errno != ENOBUFS))
		failf(w, "recvfrom_zcopy() with %zu bytes of room: %d (%s), not ENOBUFS",
		      len, rc, strerror(errno));
	if (rc < 0 || !(flags & MSG_VMA_ZCOPY)) {
		if (rc >= 0)
			check_copy(w, "recvfrom_zcopy()", u.b, rc, len);
		if (!racy)
			pthread_mutex_unlock(&fdmu);
		return;
	}
	count(C_ZC);
	pk = &u.p.pkts[0];
	if (u.p.n_packet_num != 1 || !pk->packet_id)
		failf(w, "recvfrom_zcopy() gave %zu packets, id %p", u.p.n_packet_num,
		      pk->packet_id);
	if (len >= sizeof(u.p) + sizeof(*pk) + sizeof(struct iovec)) {
		if (pk->sz_iov != 1 || pk->iov[0].iov_len != (size_t)rc ||
		    !pay_ok(pk->iov[0].iov_base, pk->iov[0].iov_len, true, &port, &seq))
			failf(w, "recvfrom_zcopy() handed out %d bytes (%zu pieces) that were not sent",
			      rc, pk->sz_iov);
		else
			chk = true;
	}
	if (racy) {
		sid = port - PORT0;
		if (!chk || sid < 0 || sid >= NPORTS) {
			/* whose it is cannot be known: give it back now */
			api->free_packets(fd, pk, 1);
			return;
		}
		pthread_mutex_lock(&fdmu);
	} else if (chk && port != PORT0 + sid) {
		failf(w, "recvfrom_zcopy() on port %d's socket returned a datagram for port %u",
		      PORT0 + sid, port);
	}
	if (atomic_load(&alive[sid]))
		took(w, pk->packet_id, sid, chk ? pk->iov[0].iov_base : NULL,
		     chk ? (uint16_t)rc : 0, seq, chk, fd);
	pthread_mutex_unlock(&fdmu);
}

/* recv(), recvmsg(), recvmmsg(), read() on an fd of the moment. */
static void op_recv(struct worker *w)
{
	char b[2][2048];
	struct iovec iov[2] = { { b[0], sizeof(b[0]) }, { b[1], sizeof(b[1]) } };
	struct mmsghdr mm[2];
	int fd = racy_fd(w), i, rc;
	int flags = below(w, 3) || (skip & K_BLOCK) ? MSG_DONTWAIT : 0;

	memset(mm, 0, sizeof(mm));
	for (i = 0; i < 2; i++) {
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	switch (below(w, skip & K_BLOCK ? 3 : 4)) {	/* read() blocks */
	case 0:
		begin(w, "recv", fd);
		rc = (int)recv(fd, b[0], sizeof(b[0]), flags);
		trace(w, "recv", fd, rc, NULL);
		check_copy(w, "recv()", b[0], rc, sizeof(b[0]));
		break;
	case 1:
		begin(w, "recvmsg", fd);
		rc = (int)recvmsg(fd, &mm[0].msg_hdr, flags);
		trace(w, "recvmsg", fd, rc, NULL);
		check_copy(w, "recvmsg()", b[0], rc, sizeof(b[0]));
		break;
	case 2:
		begin(w, "recvmmsg", fd);
		rc = recvmmsg(fd, mm, 2, flags | MSG_DONTWAIT, NULL);
		trace(w, "recvmmsg", fd, rc, NULL);
		for (i = 0; i < rc && i < 2; i++)
			check_copy(w, "recvmmsg()", b[i], mm[i].msg_len, sizeof(b[i]));
		break;
	default:
		begin(w, "read", fd);
		rc = (int)read(fd, b[0], sizeof(b[0]));
		trace(w, "read", fd, rc, NULL);
		check_copy(w, "read()", b[0], rc, sizeof(b[0]));
	}
}

/* The waits: epoll_wait(), poll() (the ring fd too), select(). */
static void op_wait(struct worker *w)
{
	struct epoll_event ev[8];
	struct pollfd p[3];
	struct timeval tv = { 0, 1000 * below(w, 3) };
	fd_set rs;
	int i, rc, hi = -1, rfd;

	switch (below(w, 4)) {
	case 0:
		i = (int)below(w, NEP);
		begin(w, "epoll_wait", eps[i]);
		rc = epoll_wait(eps[i], ev, 8, (int)below(w, 3));
		trace(w, "epoll_wait", eps[i], rc, NULL);
		break;
	case 1:
		for (i = 0; i < 3; i++)
			p[i] = (struct pollfd){ .fd = racy_fd(w), .events = POLLIN };
		begin(w, "poll", p[0].fd);
		rc = poll(p, 3, (int)below(w, 3));
		trace(w, "poll", p[0].fd, rc, NULL);
		break;
	case 2:
		FD_ZERO(&rs);
		for (i = 0; i < 2; i++) {
			int fd = racy_fd(w);

			if (fd >= 0 && fd < FD_SETSIZE) {
				FD_SET(fd, &rs);
				hi = fd > hi ? fd : hi;
			}
		}
		begin(w, "select", hi);
		rc = select(hi + 1, &rs, NULL, NULL, &tv);
		trace(w, "select", hi, rc, NULL);
		break;
	default:
		rfd = atomic_load(&ring_fd);
		if (rfd < 0)
			return;
		p[0] = (struct pollfd){ .fd = rfd, .events = POLLIN };
		begin(w, "poll(ring)", rfd);
		rc = poll(p, 1, (int)below(w, 2));
		trace(w, "poll(ring)", rfd, rc, NULL);
	}
}

static void op_epoll_ctl(struct worker *w)
{
	static const int ops[] = { EPOLL_CTL_ADD, EPOLL_CTL_DEL, EPOLL_CTL_MOD };
	struct epoll_event ev = { .events = EPOLLIN };
	int fd = racy_fd(w), ep = eps[below(w, NEP)], rc;

	if (below(w, 2))
		ev.events |= EPOLLET;
	if (!below(w, 8))
		ev.events |= EPOLLONESHOT;
	ev.data.fd = fd;
	begin(w, "epoll_ctl", fd);
	rc = epoll_ctl(ep, ops[below(w, 3)], fd, &ev);
	trace(w, "epoll_ctl", fd, rc, NULL);
	count(C_EPCTL);
}

static void op_register(struct worker *w)
{
	int fd = racy_fd(w), s = (int)below(w, NSLOT), rc;

	begin(w, "register_recv_callback", fd);
	rc = api->register_recv_callback(fd, below(w, 3) ? stress_cb : NULL,
					 &cbctx[s]);
	trace(w, "register_recv_callback", fd, rc, NULL);
}

/* The ring's fd, once a socket has one. */
static void learn_ring(int fd)
{
	int r = -1;

	if (atomic_load(&ring_fd) < 0 && fd >= 0 &&
	    api->get_socket_rings_fds(fd, &r, 1) == 1)
		atomic_store(&ring_fd, r);
}

/* socketxtreme_poll() on an fd of the moment, the ring or an epoll set. */
static void op_xtpoll(struct worker *w)
{
	struct vma_completion_t c[8];
	unsigned int n = 1 + below(w, 8);
	int fd, rc, i, which = (int)below(w, 4);
	const char *name;
	uint16_t port;
	uint32_t seq;

	if (which == 2 && atomic_load(&ring_fd) >= 0) {
		fd = atomic_load(&ring_fd);
		name = "xt_poll(ring)";
	} else if (which == 3) {
		fd = eps[below(w, NEP)];
		name = "xt_poll(epoll)";
	} else {
		fd = racy_fd(w);
		name = "xt_poll";
	}
	begin(w, name, fd);
	rc = api->socketxtreme_poll(fd, c, n, 0);
	trace(w, name, fd, rc, rc > 0 ? c[0].packet.buff_lst : NULL);
	if (rc > (int)n)
		failf(w, "socketxtreme_poll() for %u completions returned %d", n, rc);
	for (i = 0; i < rc && i < (int)n; i++) {
		struct vma_buff_t *b = c[i].packet.buff_lst;
		struct held h;

		if (c[i].events & VMA_SOCKETXTREME_NEW_CONNECTION_ACCEPTED)
			failf(w, "a connection accepted: there is no TCP here");
		if (!(c[i].events & VMA_SOCKETXTREME_PACKET))
			continue;
		count(C_XTPKT);
		if (!b || c[i].packet.num_bufs != 1 || b->next ||
		    b->len != c[i].packet.total_len ||
		    !pay_ok(b->payload, b->len, true, &port, &seq) ||
		    c[i].user_data != (uint64_t)(port - PORT0)) {
			failf(w, "socketxtreme_poll() packet %p (%zu buffers, %u bytes, user data %llu) is not what was sent",
			      (void *)b, c[i].packet.num_bufs, c[i].packet.total_len,
			      (unsigned long long)c[i].user_data);
			continue;
		}
		h = (struct held){ .id = b, .sid = -1, .refs = 1, .pay = b->payload,
				   .len = b->len, .seq = seq, .chk = true,
				   .desc = c[i].packet };
		reg_take(w, b, -1);
		push(w, &h);
	}
	if (rc < 0 && errno != EBADF && errno != EBADFD && errno != EINVAL)
		failf(w, "socketxtreme_poll(fd %d): %s", fd, strerror(errno));
}

/* One reference more on a socketXtreme buffer held. */
static void op_xtref(struct worker *w)
{
	int i, rc;
	struct held *h;

	for (i = 0; i < w->nh && w->h[i].sid >= 0; i++)
		;
	if (i == w->nh || w->h[i].refs >= 4)
		return;
	h = &w->h[i];
	reg_ref(h->id);
	begin(w, "xt_ref_buff", -1);
	rc = api->socketxtreme_ref_vma_buff(h->id);
	trace(w, "xt_ref_buff", -1, rc, h->id);
	if (rc != (int)h->refs + 1)
		failf(w, "socketxtreme_ref_vma_buff(%p) with %u references: %d (%s)",
		      h->id, h->refs, rc, rc < 0 ? strerror(errno) : "");
	h->refs++;
	count(C_XTREF);
}

/* Several socketXtreme packets at once (each loses one reference). */
static void op_xtfree_many(struct worker *w)
{
	struct vma_packet_desc_t d[4];
	int idx[4], n = 0, i, rc;

	for (i = 0; i < w->nh && n < 4; i++)
		if (w->h[i].sid < 0 && below(w, 2))
			idx[n++] = i;
	if (!n)
		return;
	for (i = 0; i < n; i++) {
		if (w->h[idx[i]].refs == 1)
			check_held(w, &w->h[idx[i]]);
		reg_put(w->h[idx[i]].id, -1);
		d[i] = w->h[idx[i]].desc;
	}
	begin(w, "xt_free_packets", -1);
	rc = api->socketxtreme_free_vma_packets(d, n);
	trace(w, "xt_free_packets", -1, rc, d[0].buff_lst);
	if (rc)
		failf(w, "socketxtreme_free_vma_packets() of %d packets held: %s", n,
		      strerror(errno));
	count(C_XTFREE);
	for (i = n - 1; i >= 0; i--)	/* idx[] rises: drop from the top */
		if (!--w->h[idx[i]].refs)
			drop(w, idx[i]);
}

/* What the registry knows of id, for a report. */
static void reg_story(void *id)
{
	struct ent *e;
	int k;

	pthread_mutex_lock(&regmu);
	e = reg_get(id);
	if (e) {
		rawf("#   chunk %p: handed out %u times, last to %s %d by thread %d at [%llu]%s; last given back (%s) by thread %d at [%llu]\n",
		     id, e->outs, e->last_sid < 0 ? "socketXtreme" : "port",
		     e->last_sid < 0 ? 0 : PORT0 + e->last_sid, e->last_thr,
		     (unsigned long long)e->last_at,
		     e->last_sid >= 0 && !atomic_load(&alive[e->last_sid]) ?
		     " (that socket's last fd is closed)" : "",
		     e->back_how ? e->back_how : "never", e->back_thr,
		     (unsigned long long)e->back_at);
		if (e->last_sid >= 0 && !atomic_load(&alive[e->last_sid]))
			rawf("#   port %d's last fd closed at [%llu]\n",
			     PORT0 + e->last_sid,
			     (unsigned long long)closed_at[e->last_sid]);
		for (k = 0; k < e->nh; k++)
			rawf("#   holder %d: %s %d, %u refs%s\n", k,
			     e->h[k].sid < 0 ? "socketXtreme" : "port",
			     e->h[k].sid < 0 ? 0 : PORT0 + e->h[k].sid, e->h[k].refs,
			     live(e, k) ? "" : " (socket closed)");
	}
	pthread_mutex_unlock(&regmu);
}

/*
 * An audit, every other thread stopped: a sample of the chunks nobody
 * holds may not be freed again by any call, and the socketXtreme
 * buffers held have the references taken.
 */
static void audit(struct worker *w, int max)
{
	void *ids[64];
	int n = 0, i, j, k, fds[NSLOT], nf = 0, rc;
	uint32_t start = below(w, REG_SIZE);
	struct vma_packet_desc_t d;

	pthread_mutex_lock(&regmu);
	for (i = 0; i < REG_SIZE && n < max && n < 64; i++) {
		struct ent *e = &reg[(start + i) % REG_SIZE];

		if (e->id && e->outs && !live_holders(e))
			ids[n++] = e->id;
	}
	pthread_mutex_unlock(&regmu);
	pthread_mutex_lock(&fdmu);
	for (i = 0; i < NSLOT; i++) {
		int fd = atomic_load(&slot_fd[i]);

		for (j = 0; j < i && fd >= 0; j++)
			if (atomic_load(&slot_fd[j]) >= 0 && slot_sid[j] == slot_sid[i])
				break;
		if (fd >= 0 && j == i)
			fds[nf++] = fd;	/* one fd per socket */
	}
	begin(w, "audit", -1);
	for (i = 0; i < n; i++) {
		for (k = 0; k < nf; k++) {
			errno = 0;
			rc = api->free_packets(fds[k], (struct vma_packet_t *)&ids[i], 1);
			if (rc != -1 || (errno != ENOENT && errno != EINVAL)) {
				failf(w, "free_packets(fd %d, %p) of a chunk nobody holds: %d (%s): given back twice",
				      fds[k], ids[i], rc, strerror(errno));
				reg_story(ids[i]);
			} else {
				count(C_STALE);
			}
		}
		if (!xt_mode)
			continue;
		errno = 0;
		rc = api->socketxtreme_free_vma_buff(ids[i]);
		if (rc != -1 || errno != EINVAL) {
			failf(w, "socketxtreme_free_vma_buff(%p) of a buffer nobody holds: %d (%s)",
			      ids[i], rc, strerror(errno));
			reg_story(ids[i]);
		}
		errno = 0;
		rc = api->socketxtreme_ref_vma_buff(ids[i]);
		if (rc != -1 || errno != EINVAL)
			failf(w, "socketxtreme_ref_vma_buff(%p) of a buffer nobody holds: %d (%s)",
			      ids[i], rc, strerror(errno));
		d = (struct vma_packet_desc_t){ .num_bufs = 1, .buff_lst = ids[i] };
		errno = 0;
		rc = api->socketxtreme_free_vma_packets(&d, 1);
		if (rc != -1 || errno != EINVAL)
			failf(w, "socketxtreme_free_vma_packets() of a buffer nobody holds: %d (%s)",
			      rc, strerror(errno));
		count(C_STALE);
	}
	/* the references of what the threads hold, exactly */
	for (j = 0; xt_mode && j <= NTHR; j++)
		for (i = 0; i < workers[j].nh && i < 2; i++) {
			struct held *h = &workers[j].h[i];

			if (h->sid >= 0)
				continue;
			rc = api->socketxtreme_ref_vma_buff(h->id);
			k = api->socketxtreme_free_vma_buff(h->id);
			if (rc != (int)h->refs + 1 || k != (int)h->refs)
				failf(w, "a buffer held with %u references: ref gave %d, free %d",
				      h->refs, rc, k);
		}
	trace(w, "audit", -1, n, NULL);
	pthread_mutex_unlock(&fdmu);
	count(C_AUDIT);
}

/* ---- a thread ---- */

static void one_op(struct worker *w)
{
	uint32_t r = below(w, 100);
	int s;

	if (!below(w, 300) && !(skip & K_AUDIT)) {
		pthread_rwlock_wrlock(&world);
		audit(w, 24);
		pthread_rwlock_unlock(&world);
		return;
	}
	pthread_rwlock_rdlock(&world);
	if (r < 12 && (skip & (r < 4 ? K_CLOSE : r < 9 ? K_OPEN : K_DUP))) {
		/* left out */
	} else if (r < 4) {
		pthread_mutex_lock(&fdmu);
		s = live_slot(w);
		if (s >= 0)
			close_slot(w, s);
		pthread_mutex_unlock(&fdmu);
		count(C_CLOSE);
	} else if (r < 9) {
		pthread_mutex_lock(&fdmu);
		open_socket(w);
		learn_ring(atomic_load(&slot_fd[below(w, NSLOT)]));
		pthread_mutex_unlock(&fdmu);
	} else if (r < 12) {
		pthread_mutex_lock(&fdmu);
		s = live_slot(w);
		if (s >= 0)
			dup_slot(w, s, (int)below(w, NSLOT));
		pthread_mutex_unlock(&fdmu);
	} else if (r < 18) {
		if (!(skip & K_EPOLL))
			op_epoll_ctl(w);
	} else if (r < 23) {
		if (!(skip & K_CB))
			op_register(w);
	} else if (r < 31) {
		if (!(skip & K_WAIT))
			op_wait(w);
	} else if (r < 38) {
		if (!(skip & K_RECV))
			op_recv(w);
	} else if (r < 50) {
		if (w->nh)
			free_one(w, (int)below(w, (uint32_t)w->nh));
	} else if (r < 53) {
		for (s = 0; s < w->nh && w->h[s].sid < 0; s++)
			;
		if (s < w->nh && !(skip & K_RACYFREE))
			free_racy(w, s);
	} else if (!xt_mode) {
		if (r < 65) {
			op_zcopy(w, false);
		} else if (r < 99) {
			op_zcopy(w, true);
		} else {
			struct vma_completion_t c;

			errno = 0;
			if (api->socketxtreme_poll(racy_fd(w), &c, 1, 0) != -1 ||
			    errno != EOPNOTSUPP)
				failf(w, "socketxtreme_poll() without VMA_SOCKETXTREME=1: %s",
				      strerror(errno));
		}
	} else {
		if (r < 58)
			op_zcopy(w, below(w, 2));
		else if (r < 85)
			op_xtpoll(w);
		else if (r < 90 && !(skip & K_XTREF))
			op_xtref(w);
		else if (r < 96) {
			for (s = 0; s < w->nh && w->h[s].sid >= 0; s++)
				;
			if (s < w->nh)
				free_one(w, s);
		} else {
			op_xtfree_many(w);
		}
	}
	commit(w);
	while (w->nh > HMAX && !atomic_load(&stop))
		free_one(w, (int)below(w, (uint32_t)w->nh));
	atomic_store(&w->cur, NULL);
	pthread_rwlock_unlock(&world);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double deadline;

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	me = w;
	w->tid = (int)syscall(SYS_gettid);
	while (!atomic_load(&stop)) {
		if (atomic_fetch_add(&ops_done, 1) >= ops_target) {
			atomic_fetch_sub(&ops_done, 1);
			break;
		}
		one_op(w);
		atomic_fetch_add(&progress, 1);
		if (deadline && !(atomic_load(&ops_done) % 64) && now_s() > deadline)
			atomic_store(&stop, true);
	}
	return NULL;
}

/* ---- the end: everything back, then the ring whole ---- */

/* Everything a slot's socket has: freed at once. */
static void drain_all(struct worker *w)
{
	union { struct vma_packets_t p; char b[2048]; } u;
	struct vma_completion_t c[16];
	int s, fd, flags, rc, i, k, round;

	for (round = 0; round < 4; round++) {
		for (s = 0; s < NSLOT; s++) {
			pthread_mutex_lock(&fdmu);
			fd = atomic_load(&slot_fd[s]);
			for (k = 0; fd >= 0 && k < 10000; k++) {
				flags = MSG_DONTWAIT;
				rc = api->recvfrom_zcopy(fd, u.b, sizeof(u.b), &flags,
							 NULL, NULL);
				if (rc < 0)
					break;
				if (!(flags & MSG_VMA_ZCOPY)) {
					check_copy(w, "recvfrom_zcopy()", u.b, rc, sizeof(u.b));
					continue;
				}
				if (!pay_ok(u.p.pkts[0].iov[0].iov_base, (size_t)rc, true, NULL, NULL))
					failf(w, "drain: a packet that was not sent");
				reg_take(w, u.p.pkts[0].packet_id, slot_sid[s]);
				reg_put(u.p.pkts[0].packet_id, slot_sid[s]);
				if (api->free_packets(fd, u.p.pkts, 1))
					failf(w, "drain: free_packets(): %s", strerror(errno));
			}
			pthread_mutex_unlock(&fdmu);
			commit(w);
			for (k = 0; fd >= 0 && xt_mode && k < 1000; k++) {
				rc = api->socketxtreme_poll(fd, c, 16, 0);
				for (i = 0; i < rc; i++) {
					if (!(c[i].events & VMA_SOCKETXTREME_PACKET))
						continue;
					reg_take(w, c[i].packet.buff_lst, -1);
					reg_put(c[i].packet.buff_lst, -1);
					if (api->socketxtreme_free_vma_packets(&c[i].packet, 1))
						failf(w, "drain: socketxtreme_free_vma_packets(): %s",
						      strerror(errno));
				}
				if (rc <= 0)
					break;
			}
			commit(w);
			atomic_fetch_add(&progress, 1);
		}
		usleep(50000);
	}
}

/* A datagram of the burst: seq below WRE, whole, for port. */
static bool burst_one(struct __test_metadata *_metadata, const void *p,
		      size_t len, uint16_t port, uint8_t *seen)
{
	uint16_t pt;
	uint32_t seq;

	if (!pay_ok(p, len, true, &pt, &seq) || pt != port || seq >= WRE) {
		TH_LOG("a datagram of the burst is not what was sent");
		return false;
	}
	if (seen[seq]++) {
		TH_LOG("sequence %u came twice: two descriptors on one chunk", seq);
		return false;
	}
	return true;
}

/*
 * WRE datagrams to fd's port while nobody reads: the ring has a chunk
 * for each (none went to the kernel socket), each comes once, whole,
 * without a copy; each is freed, and freed again fails.
 */
static void burst(struct __test_metadata *_metadata, int fd, uint16_t port,
		  int round)
{
	union { struct vma_packets_t p; char b[256]; } u;
	struct vma_completion_t c[16];
	static void *ids[WRE];
	uint8_t seen[WRE] = { 0 };
	int got = 0, flags, rc, i, copies = 0;
	double end;
	char x;

	atomic_store(&shm->burst_port, port);
	atomic_store(&shm->burst_n, WRE);
	ASSERT_TRUE(sender_mode(shm, S_BURST, 30));
	ASSERT_TRUE(sender_mode(shm, S_IDLE, 5));
	usleep(200000);
	if (xt_mode) {
		/* what the ring could not take went to the kernel socket */
		errno = 0;
		EXPECT_EQ(-1, recv(fd, &x, 1, MSG_DONTWAIT | MSG_PEEK))
			TH_LOG("burst %d: a datagram reached the kernel socket: the FILL ring was short",
			       round);
		EXPECT_EQ(EAGAIN, errno);
	}
	end = now_s() + 10;
	while (got < WRE && now_s() < end) {
		atomic_fetch_add(&progress, 1);
		if (!xt_mode) {
			flags = MSG_DONTWAIT;
			rc = api->recvfrom_zcopy(fd, u.b, sizeof(u.b), &flags, NULL, NULL);
			if (rc < 0) {
				usleep(1000);
				continue;
			}
			if (!(flags & MSG_VMA_ZCOPY)) {
				copies++;
				EXPECT_TRUE(burst_one(_metadata, u.b, (size_t)rc, port, seen));
				continue;
			}
			EXPECT_TRUE(burst_one(_metadata, u.p.pkts[0].iov[0].iov_base,
					      u.p.pkts[0].iov[0].iov_len, port, seen));
			ids[got++] = u.p.pkts[0].packet_id;
			continue;
		}
		rc = api->socketxtreme_poll(fd, c, 16, 0);
		for (i = 0; i < rc; i++) {
			struct vma_buff_t *b = c[i].packet.buff_lst;

			if (!(c[i].events & VMA_SOCKETXTREME_PACKET) || !b)
				continue;
			EXPECT_TRUE(burst_one(_metadata, b->payload, b->len, port, seen));
			if (got < WRE)
				ids[got++] = b;
		}
		if (rc <= 0)
			usleep(1000);
	}
	EXPECT_EQ(WRE, got) TH_LOG("burst %d: %d of %d through the ring without a copy, %d copies",
				   round, got, WRE, copies);
	EXPECT_EQ(0, copies) TH_LOG("burst %d: a datagram was copied: the FILL ring was short",
				    round);
	if (!xt_mode) {
		flags = MSG_DONTWAIT;
		EXPECT_EQ(-1, api->recvfrom_zcopy(fd, u.b, sizeof(u.b), &flags, NULL, NULL));
	} else {
		EXPECT_EQ(0, api->socketxtreme_poll(fd, c, 16, 0));
	}
	for (i = 0; i < got; i++) {
		if (xt_mode) {
			EXPECT_EQ(0, api->socketxtreme_free_vma_buff(ids[i]));
		} else {
			EXPECT_EQ(0, api->free_packets(fd, (struct vma_packet_t *)&ids[i], 1));
		}
	}
	/* freed twice: refused, nothing given back twice */
	for (i = 0; i < got; i++) {
		errno = 0;
		if (xt_mode) {
			EXPECT_EQ(-1, api->socketxtreme_free_vma_buff(ids[i]));
			EXPECT_EQ(EINVAL, errno);
		} else {
			EXPECT_EQ(-1, api->free_packets(fd, (struct vma_packet_t *)&ids[i], 1));
			EXPECT_EQ(ENOENT, errno);
		}
	}
}

/* The library's count of held packets (dump_fd_stats() to the log), or -1. */
static long held_by_library(int fd, const char *log)
{
	char line[1024], *p;
	long held = -1;
	unsigned int v;
	FILE *f;

	if (api->dump_fd_stats(fd, 2 /* VLOG_WARNING */))
		return -1;
	f = fopen(log, "r");
	while (f && fgets(line, sizeof(line), f)) {
		p = strstr(line, " packets held");
		if (!p)
			continue;
		while (p > line && p[-1] >= '0' && p[-1] <= '9')
			p--;
		if (sscanf(p, "%u packets held", &v) == 1)
			held = v;
	}
	if (f)
		fclose(f);
	return held;
}

/* ---- the test ---- */

FIXTURE(xs) {
	pid_t sender;
};

FIXTURE_VARIANT(xs) {
	bool xt;
};

FIXTURE_VARIANT_ADD(xs, plain) {
	.xt = false,
};

FIXTURE_VARIANT_ADD(xs, socketxtreme) {
	.xt = true,
};

FIXTURE_SETUP(xs)
{
	pid_t parent;

	/* before the library starts: a ring of WRE chunks, a log of its own */
	setenv("VMA_RX_WRE", "128", 1);
	setenv("VMA_LOG_FILE", "/tmp/vmak-stress-%d.log", 1);
	if (variant->xt)
		setenv("VMA_SOCKETXTREME", "1", 1);
	xt_mode = variant->xt;
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, shm);
	parent = getpid();
	self->sender = fork();
	ASSERT_GE(self->sender, 0);
	sender_pid = self->sender;
	if (!self->sender) {
		/* it holds the test's stdout: it must not outlive the test */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent || enter("sa"))
			_exit(1);
		sender_loop(shm, parent);
	}
	ASSERT_EQ(0, enter("sb"));
	ASSERT_EQ(0, setresgid(65534, 65534, 65534));
	ASSERT_EQ(0, setresuid(65534, 65534, 65534));
}

FIXTURE_TEARDOWN(xs)
{
	atomic_store(&shm->mode, S_QUIT);
	waitpid(self->sender, NULL, 0);
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

TEST_F_TIMEOUT(xs, random_ops, 180)
{
	const char *lp = getenv("LD_PRELOAD"), *lib = getenv("VMAK_STRESS_LIB");
	const char *only = getenv("VMAK_STRESS_VARIANT");
	uint64_t seed = env_u64("VMAK_STRESS_SEED", 0), secs;
	_Atomic bool wd_done = false;
	pthread_rwlockattr_t ra;
	struct rlimit rl;
	pthread_t wd;
	char log[64], msg[512];
	int i, fd, s, rounds;
	uint16_t port;
	long held;
	double t0, t1;
	void (*set_death_cb)(void (*)(void));

	if (only && *only && strcmp(only, xt_mode ? "socketxtreme" : "plain"))
		SKIP(return, "VMAK_STRESS_VARIANT=%s", only);
	if (!(lib && !strcmp(lib, "plain")))
		ASSERT_TRUE(lp && strstr(lp, "/asan/libvmak.so"))
			TH_LOG("not on the ASan library (LD_PRELOAD=%s): make asan, or VMAK_STRESS_LIB=plain",
			       lp ? lp : "");
	ops_target = env_u64("VMAK_STRESS_OPS", DEF_OPS);
	secs = env_u64("VMAK_STRESS_SECS",
		       getenv("VMAK_STRESS_OPS") ? 0 : DEF_SECS);
	if (!seed)
		seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
	skip = parse_skip(getenv("VMAK_STRESS_SKIP"));
	TH_LOG("%s, %llu operations%s, seed %llu, on %s%s%s", xt_mode ? "socketXtreme" : "plain",
	       (unsigned long long)ops_target, secs ? " at most" : "",
	       (unsigned long long)seed, lp ? lp : "?", skip ? "; left out: " : "",
	       skip ? getenv("VMAK_STRESS_SKIP") : "");
	set_death_cb = (void (*)(void (*)(void)))dlsym(RTLD_DEFAULT,
						       "__sanitizer_set_death_callback");
	if (set_death_cb)
		set_death_cb(on_sanitizer_death);
	main_th = pthread_self();
	workers[NTHR].tid = (int)syscall(SYS_gettid);
	stack_handler_install();
	snprintf(log, sizeof(log), "/tmp/vmak-stress-%d.log", (int)getpid());

	/* the library's own fds go to half the limit and up: above the slots' */
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_cur < 1024 && rl.rlim_max >= 1024) {
		rl.rlim_cur = 1024;
		ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	}
	ASSERT_GE(rl.rlim_cur / 2, SLOT_FD_MIN + 4 * NSLOT);
	for (i = 0; i < NSLOT; i++)
		atomic_store(&slot_fd[i], -1);
	for (i = 0; i < NEP; i++) {
		eps[i] = epoll_create1(0);
		ASSERT_GE(eps[i], 0);
	}
	api = vma_get_api();
	ASSERT_NE(NULL, api);
	if (xt_mode)
		ASSERT_TRUE(api->vma_extra_supported_mask & VMA_EXTRA_API_SOCKETXTREME_POLL);
	for (i = 0; i <= NTHR; i++) {
		workers[i].idx = i;
		workers[i].rng = seed * 2654435761ULL + (uint64_t)i * 0x9e3779b97f4a7c15ULL + 1;
	}
	me = &workers[NTHR];
	pthread_mutex_lock(&fdmu);
	for (i = 0; i < NSLOT - 2; i++)
		open_socket(me);
	pthread_mutex_unlock(&fdmu);
	ASSERT_TRUE(sender_mode(shm, S_STREAM, 5));
	/* the first datagrams make the ring: its fd for the ring's polls */
	for (i = 0; i < 200 && atomic_load(&ring_fd) < 0; i++) {
		usleep(10000);
		learn_ring(atomic_load(&slot_fd[0]));
	}

	pthread_rwlockattr_init(&ra);
	pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&world, &ra);
	ASSERT_EQ(0, pthread_create(&wd, NULL, watchdog, &wd_done));
	t0 = now_s();
	deadline = secs ? t0 + (double)secs : 0;
	for (i = 0; i < NTHR; i++)
		ASSERT_EQ(0, pthread_create(&workers[i].th, NULL, worker_main, &workers[i]));
	for (i = 0; i < NTHR; i++)
		pthread_join(workers[i].th, NULL);
	t1 = now_s();

	/* the end: no thread runs; the sender stops */
	EXPECT_TRUE(sender_mode(shm, S_IDLE, 5));
	usleep(200000);
	pthread_mutex_lock(&fdmu);
	for (s = 0; s < NSLOT; s++) {
		fd = atomic_load(&slot_fd[s]);
		if (fd >= 0)
			api->register_recv_callback(fd, NULL, NULL);
	}
	pthread_mutex_unlock(&fdmu);
	if (!atomic_load(&nfail)) {
		drain_all(me);
		/* everything the threads hold, freed */
		for (i = 0; i <= NTHR; i++) {
			while (workers[i].nh && !atomic_load(&nfail))
				free_one(&workers[i], workers[i].nh - 1);
			atomic_fetch_add(&progress, 1);
		}
		/* nothing is held now: no free of any of them may succeed */
		audit(me, 64);
		pthread_mutex_lock(&regmu);
		for (i = 0; i < REG_SIZE; i++)
			if (reg[i].id && live_holders(&reg[i]))
				failf(me, "chunk %p still held at the end", reg[i].id);
		pthread_mutex_unlock(&regmu);
	}
	pthread_mutex_lock(&fdmu);
	for (s = 0; s < NSLOT; s++)
		if (atomic_load(&slot_fd[s]) >= 0)
			close_slot(me, s);
	pthread_mutex_unlock(&fdmu);
	/*
	 * The epoll sets stay open: a socket's last close takes it out of
	 * every set, and what it held goes back then, not with the set.
	 */

	/* the report */
	TH_LOG("%llu operations in %.1f s by %d threads, %llu datagrams sent",
	       (unsigned long long)atomic_load(&ops_done), t1 - t0, NTHR,
	       (unsigned long long)atomic_load(&shm->sent));
	msg[0] = 0;
	for (i = 0; i < C_NCOUNT; i++)
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "%s%s %llu",
			 i ? ", " : "", cnames[i], (unsigned long long)atomic_load(&cnt[i]));
	TH_LOG("%s", msg);
	for (i = 0; i < atomic_load(&nfail) && i < 6; i++)
		TH_LOG("failure: %s", failmsg[i]);
	ASSERT_EQ(0, atomic_load(&nfail));
	EXPECT_GE(atomic_load(&ops_done), ops_target < 2000 ? ops_target : 2000);

	/*
	 * The ring whole: a socket of its own (the ring outlives the
	 * others), a few rounds so that what the ring still had for sockets
	 * gone is taken and given back, then the bursts.
	 */
	pthread_mutex_lock(&fdmu);
	open_socket(me);
	s = live_slot(me);
	pthread_mutex_unlock(&fdmu);
	ASSERT_GE(s, 0);
	fd = atomic_load(&slot_fd[s]);
	port = (uint16_t)(PORT0 + slot_sid[s]);
	api->register_recv_callback(fd, NULL, NULL);
	for (rounds = 0; rounds < 3; rounds++) {
		atomic_store(&shm->burst_port, port);
		atomic_store(&shm->burst_n, 16);
		ASSERT_TRUE(sender_mode(shm, S_BURST, 30));
		ASSERT_TRUE(sender_mode(shm, S_IDLE, 5));
		usleep(100000);
		drain_all(me);
	}
	burst(_metadata, fd, port, 1);
	burst(_metadata, fd, port, 2);
	held = held_by_library(fd, log);
	if (held < 0)
		TH_LOG("no count of held packets in %s (dump_fd_stats()): not checked", log);
	else
		EXPECT_EQ(0, held) TH_LOG("the library still counts %ld packets held", held);
	pthread_mutex_lock(&fdmu);
	close_slot(me, s);
	pthread_mutex_unlock(&fdmu);
	for (i = 0; i < NEP; i++)
		close(eps[i]);
	atomic_store(&wd_done, true);
	pthread_join(wd, NULL);
	unlink(log);
}

/*
 * What the stress found first, alone: with socketXtreme, a blocking
 * receive on a socket whose ring holds datagrams (they wait for
 * socketxtreme_poll(), recv() does not see them) and whose kernel socket
 * is empty must still end at SO_RCVTIMEO. Each receive runs in a thread of its own, so that one
 * that never returns fails the test instead of hanging it.
 */
struct blocked {
	int fd, kind;
	_Atomic int done;
	ssize_t rc;
	int err;
};

static void *blocked_recv(void *arg)
{
	struct blocked *b = arg;
	char buf[256];
	int flags = 0;

	switch (b->kind) {
	case 0:
		b->rc = recv(b->fd, buf, sizeof(buf), 0);
		break;
	case 1:
		b->rc = read(b->fd, buf, sizeof(buf));
		break;
	default:
		b->rc = api->recvfrom_zcopy(b->fd, buf, sizeof(buf), &flags,
					    NULL, NULL);
	}
	b->err = errno;
	atomic_store(&b->done, 1);
	return NULL;
}

TEST_F_TIMEOUT(xs, blocking_receive_ends_at_its_timeout, 60)
{
	static const char *const what[] = { "recv()", "read()", "recvfrom_zcopy()" };
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PORT0 - 1) };
	struct timeval tv = { 0, 100000 };
	struct vma_completion_t c[4];
	struct blocked b[3];
	pthread_t th;
	int fd, k, i;

	api = vma_get_api();
	ASSERT_NE(NULL, api);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_GE(fd, 0);
	inet_pton(AF_INET, ADDR_B, &a.sin_addr);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&a, sizeof(a)));
	ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	/* a datagram through the ring, then more that wait there */
	atomic_store(&shm->ports[0], PORT0 - 1);
	ASSERT_TRUE(sender_mode(shm, S_STREAM, 5));
	usleep(300000);
	ASSERT_TRUE(sender_mode(shm, S_IDLE, 5));
	if (xt_mode) {
		/* one polled and freed, the rest left in the ring */
		for (i = 0, k = 0; i < 100 && k <= 0; i++, usleep(10000))
			k = api->socketxtreme_poll(fd, c, 1, 0);
		ASSERT_EQ(1, k);
		EXPECT_EQ(0, api->socketxtreme_free_vma_packets(&c[0].packet, 1));
	}
	/*
	 * Every datagram a receive can read, read: plain, all of them;
	 * socketXtreme, those the full ring passed to the kernel socket
	 * (recv() reads those, as libvma's reads its kernel socket)
	 */
	while (recv(fd, c, sizeof(c), MSG_DONTWAIT) >= 0)
		;
	for (k = 0; k < 3; k++) {
		b[k] = (struct blocked){ .fd = fd, .kind = k };
		ASSERT_EQ(0, pthread_create(&th, NULL, blocked_recv, &b[k]));
		for (i = 0; i < 500 && !atomic_load(&b[k].done); i++)
			usleep(10000);
		ASSERT_TRUE(atomic_load(&b[k].done))
			TH_LOG("a blocking %s with SO_RCVTIMEO of 100 ms has not returned after 5 s%s",
			       what[k], xt_mode ? " (the ring holds datagrams for socketxtreme_poll())" : "");
		pthread_join(th, NULL);
		EXPECT_EQ(-1, b[k].rc) TH_LOG("%s", what[k]);
		EXPECT_EQ(EAGAIN, b[k].err) TH_LOG("%s: %s", what[k], strerror(b[k].err));
	}
	close(fd);
}

int main(int argc, char **argv)
{
	struct __fixture_metadata *f;
	struct __test_metadata *t;
	uint64_t ops = env_u64("VMAK_STRESS_OPS", DEF_OPS);

	/* a long run: its own time (the watchdog still catches a hang) */
	for (f = __fixture_list; ops > DEF_OPS && f; f = f->next)
		for (t = f->tests; t; t = t->next)
			t->timeout = (int)(300 + ops / 200);
	if (getuid() == 0)
		netns_up();
	return __vmak_harness_run(argc, argv);
}
