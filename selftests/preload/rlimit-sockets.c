// SPDX-License-Identifier: GPL-2.0
/*
 * M12: under RLIMIT_NOFILE=128 a program fits as many UDP sockets as on
 * kernel sockets, within a little (at least 120 with the module absent),
 * and every fd number below the limit takes a dup2() onto it.
 */
#include <sys/resource.h>

#include "pt.h"

#define LIMIT 128

int main(void)
{
	struct rlimit rl = { LIMIT, LIMIT };
	int s[LIMIT], n, i, first = -1, err = 0;
	struct sockaddr_in a;

	pt_init(20);
	close_range(3, ~0U, 0);		/* whatever the caller left open */
	if (setrlimit(RLIMIT_NOFILE, &rl))
		pt_die("RLIMIT_NOFILE");
	for (n = 0; n < LIMIT; n++) {
		s[n] = socket(AF_INET, SOCK_DGRAM, 0);
		if (s[n] < 0)
			break;
		memset(&a, 0, sizeof(a));
		a.sin_family = AF_INET;
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (bind(s[n], (struct sockaddr *)&a, sizeof(a))) {
			close(s[n]);
			break;
		}
	}
	pt_ok(n >= 120, "%d bound UDP sockets fit under RLIMIT_NOFILE=%d (at least 120)",
	      n, LIMIT);
	for (i = 1; i < n; i++)
		close(s[i]);
	for (i = 3; i < LIMIT; i++) {
		if (i == s[0])
			continue;
		if (dup2(s[0], i) != i && first < 0) {
			first = i;
			err = errno;
		}
		close(i);
	}
	if (first < 0)
		pt_ok(true, "dup2(sock, n) succeeds for every free n below the limit");
	else
		pt_ok(false, "dup2(sock, %d) fails with %s under RLIMIT_NOFILE=%d",
		      first, pt_ename(err), LIMIT);
	return 0;
}
