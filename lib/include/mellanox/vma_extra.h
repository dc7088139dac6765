/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * <mellanox/vma_extra.h>: vmak's own rendering of the ABI of libvma's
 * "extra API", written from that ABI's facts (every name, number, type and
 * layout) and implemented by libvmak. A program written for libvma builds
 * against this file unchanged, in C or C++, and a program built against
 * libvma's header runs unchanged on libvmak.
 *
 * The entry point is vma_get_api() at the end: it asks the library for its
 * table of calls, struct vma_api_t. libvmak fills in every slot; a call it
 * does not support fails the way libvma's fails when a feature is missing
 * (-1 with errno set). vma_api_t.vma_extra_supported_mask has one
 * vma_extra_api_mask bit set for each call that really works: test the bit
 * before relying on a call.
 *
 * Rules this file keeps, so that it stays interchangeable with libvma's:
 *  - the include guard is libvma's (VMA_EXTRA_H), so only one of the two
 *    headers is ever seen by a compilation;
 *  - enumerations without a tag stay without a tag: C++ mangles a function
 *    taking ring_logic_t by that typedef name, and a tag would change it;
 *  - the SO_VMA_* and MSG_VMA_* numbers are plain literals, usable in #if;
 *  - nothing here has linkage (types, macros and one static inline), so
 *    there is no extern "C" block, as there is none in libvma's.
 *
 * Needs a compiler of GNU C (the packed structures): gcc or clang, any C
 * from gnu89, any C++ from C++98. In a strict ISO C mode (-std=c99 or
 * -std=c11 without _GNU_SOURCE) define _POSIX_C_SOURCE=200809L first:
 * POSIX defines struct timespec and pthread_t, ISO C does not. The GNU
 * extensions the ABI relies on are marked __extension__, so -pedantic
 * stays quiet about them.
 */
#ifndef VMA_EXTRA_H
#define VMA_EXTRA_H

/*
 * libvma's header includes the first three, and programs may count on what
 * they bring in (on glibc: <sys/socket.h>, <sys/types.h>, <sys/select.h>).
 * The other three are named for what this file itself uses: socklen_t,
 * struct sockaddr, struct iovec, getsockopt(), SOL_SOCKET and MSG_SYN;
 * pthread_t; struct timespec. With glibc's default features they add
 * nothing that <netinet/in.h> has not already declared.
 */
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/select.h>

/* ===== Numbers for the socket calls ===================================== */

/*
 * getsockopt()/setsockopt() option names, at level SOL_SOCKET.
 *
 *   SO_VMA_GET_API           get: the library's struct vma_api_t pointer
 *                            (see vma_get_api())
 *   SO_VMA_USER_DATA         set, get: a pointer-sized value, reported as
 *                            vma_completion_t.user_data
 *   SO_VMA_RING_ALLOC_LOGIC  set: a struct vma_ring_alloc_logic_attr
 *   SO_VMA_RING_USER_MEMORY  set: a struct iovec, the caller's memory for
 *                            the socket's receive ring
 *   SO_VMA_FLOW_TAG          set, get: a uint32_t flow tag for the
 *                            socket's traffic
 *   SO_VMA_SHUTDOWN_RX       set: the socket stops receiving
 */
#define SO_VMA_GET_API			2800
#define SO_VMA_USER_DATA		2801
#define SO_VMA_RING_ALLOC_LOGIC		2810
#define SO_VMA_RING_USER_MEMORY		2811
#define SO_VMA_FLOW_TAG			2820
#define SO_VMA_SHUTDOWN_RX		2821

/*
 * Control message type for vma_api_t.ioctl(). The message's level is
 * SOL_SOCKET (the request belongs to no protocol); its data is a
 * struct vma_cmsg_ioctl_user_alloc_t.
 */
enum {
	CMSG_VMA_IOCTL_USER_ALLOC = 2900
};

/*
 * recvfrom_zcopy() flags. Given in *flags: MSG_VMA_ZCOPY_FORCE, never fall
 * back to copying the data. Set in *flags on return: MSG_VMA_ZCOPY, the
 * buffer holds a struct vma_packets_t and no payload was copied.
 */
#define MSG_VMA_ZCOPY_FORCE		0x01000000
#define MSG_VMA_ZCOPY			0x00040000

/*
 * A send() flag: go through the whole send path but put nothing on the
 * wire (it warms the caches for the next real send). It is the C
 * library's MSG_SYN, 0x400 on Linux.
 */
#define VMA_SND_FLAGS_DUMMY		MSG_SYN

/* ===== The receive callback and zero-copy receive ======================= */

/* What a receive callback tells the library to do with the packet. */
typedef enum {
	/* Drop it; its buffer is reused unless another socket holds it. */
	VMA_PACKET_DROP,
	/* Queue it on the socket, for the ordinary receive calls to read. */
	VMA_PACKET_RECV,
	/*
	 * The application keeps it and gives it back later, by
	 * vma_api_t.free_packets() and never from inside the callback.
	 */
	VMA_PACKET_HOLD
} vma_recv_callback_retval_t;

/*
 * What a receive callback learns beside the payload. Packed: its layout has
 * no padding, whatever the members' alignment.
 */
struct __attribute__((packed)) vma_info_t {
	/* sizeof(struct vma_info_t) as the library knows it: compare it
	 * with your own before reading further members */
	size_t			struct_sz;
	/* the packet, for free_packets() after VMA_PACKET_HOLD */
	void			*packet_id;
	/* the packet's addresses, network byte order */
	struct sockaddr_in	*src;
	struct sockaddr_in	*dst;
	/* payload bytes */
	size_t			payload_sz;
	/* what waits in the socket's receive queue: packets, then bytes */
	uint32_t		socket_ready_queue_pkt_count;
	uint32_t		socket_ready_queue_byte_count;
	/* when the packet arrived: by the NIC's clock, by the host's */
	struct timespec		hw_timestamp;
	struct timespec		sw_timestamp;
};

/*
 * Called for each packet that arrives on a socket, after its IP and UDP
 * headers are parsed and before it is queued; installed per socket with
 * vma_api_t.register_recv_callback() (NULL removes it).
 *
 *   fd        the socket
 *   sz_iov    how many entries iov has
 *   iov       the payload, in pieces
 *   vma_info  more on the packet and the socket
 *   context   what the application gave at registration
 *
 * It runs on an application thread, inside one of the receive or wait
 * calls (recv*, read*, select, poll, epoll_wait). iov and vma_info are
 * good only until it returns: copy what you keep. The callback may use the
 * socket calls, sending and control included.
 */
typedef vma_recv_callback_retval_t
(*vma_recv_callback_t)(int fd, size_t sz_iov, struct iovec iov[],
		       struct vma_info_t *vma_info, void *context);

/*
 * One received packet, as recvfrom_zcopy() lays it out: a handle for
 * free_packets(), then sz_iov pieces of payload (pointers into the
 * library's buffers). Packed; its length depends on sz_iov.
 */
__extension__ struct __attribute__((packed)) vma_packet_t {
	void		*packet_id;
	size_t		sz_iov;
	struct iovec	iov[];
};

/* What recvfrom_zcopy() writes to its buffer with MSG_VMA_ZCOPY. */
__extension__ struct __attribute__((packed)) vma_packets_t {
	size_t			n_packet_num;	/* packets that follow */
	struct vma_packet_t	pkts[];
};

/* ===== SocketXtreme: completions polled from rings ====================== */

/*
 * Bits of vma_completion_t.events above the 32 epoll bits (EPOLLIN,
 * EPOLLOUT... share the same word). 64-bit values: the type is 8 bytes.
 */
__extension__ typedef enum {
	/* vma_completion_t.packet holds a received packet */
	VMA_SOCKETXTREME_PACKET			= 1ULL << 32,
	/* a listening socket accepted a connection by itself;
	 * vma_completion_t.user_data names the new socket */
	VMA_SOCKETXTREME_NEW_CONNECTION_ACCEPTED	= 1ULL << 33
} vma_socketxtreme_events_t;

/*
 * One buffer of received data; a packet's buffers form a list. Counted:
 * socketxtreme_ref_vma_buff() takes a reference, socketxtreme_free_vma_buff()
 * drops one.
 */
struct vma_buff_t {
	struct vma_buff_t	*next;		/* NULL on the last buffer */
	void			*payload;
	uint16_t		len;		/* bytes at payload */
};

/* One received packet, spread over a list of buffers. */
struct vma_packet_desc_t {
	size_t			num_bufs;	/* buffers in buff_lst */
	uint16_t		total_len;	/* bytes in all of them */
	struct vma_buff_t	*buff_lst;
	struct timespec		hw_timestamp;	/* NIC's arrival time */
};

/* One entry filled in by socketxtreme_poll(). */
struct vma_completion_t {
	/* meaningful when events has VMA_SOCKETXTREME_PACKET */
	struct vma_packet_desc_t packet;
	/* VMA_SOCKETXTREME_* and epoll bits */
	uint64_t		events;
	/* the socket's fd unless set by setsockopt(SO_VMA_USER_DATA) */
	uint64_t		user_data;
	/* the peer (network byte order), for a packet or a new connection */
	struct sockaddr_in	src;
	/* the listening socket, for VMA_SOCKETXTREME_NEW_CONNECTION_ACCEPTED */
	int			listen_fd;
};

/* ===== Rings: which ring a socket uses, and ring settings =============== */

/* A handle to a ring profile, from vma_api_t.vma_add_ring_profile(). */
typedef int vma_ring_profile_key;

/*
 * How sockets are spread over rings. The numbers are the ones libvma's
 * VMA_RING_ALLOCATION_LOGIC_RX/TX variables take.
 */
typedef enum {
	RING_LOGIC_PER_INTERFACE		= 0,	/* one per interface */
	RING_LOGIC_PER_IP			= 1,	/* per local address */
	RING_LOGIC_PER_SOCKET			= 10,	/* one per socket */
	RING_LOGIC_PER_USER_ID			= 11,	/* per user_id given */
	RING_LOGIC_PER_THREAD			= 20,	/* per thread */
	RING_LOGIC_PER_CORE			= 30,	/* per CPU */
	RING_LOGIC_PER_CORE_ATTACH_THREADS	= 31,	/* per CPU, pinning */
	RING_LOGIC_LAST				/* 32: one past the end */
} ring_logic_t;

/*
 * Which members of struct vma_ring_alloc_logic_attr are read (comp_mask).
 * ENGRESS, not EGRESS: that is the ABI's spelling.
 */
typedef enum {
	VMA_RING_ALLOC_MASK_RING_PROFILE_KEY	= 1 << 0,
	VMA_RING_ALLOC_MASK_RING_USER_ID	= 1 << 1,
	VMA_RING_ALLOC_MASK_RING_INGRESS	= 1 << 2,
	VMA_RING_ALLOC_MASK_RING_ENGRESS	= 1 << 3
} vma_ring_alloc_logic_attr_comp_mask;

/*
 * setsockopt(fd, SOL_SOCKET, SO_VMA_RING_ALLOC_LOGIC, &attr, sizeof(attr)):
 * how this socket picks its ring. ring_alloc_logic is always read; the
 * others as comp_mask says.
 */
struct vma_ring_alloc_logic_attr {
	uint32_t	comp_mask;	/* vma_ring_alloc_logic_attr_comp_mask */
	ring_logic_t	ring_alloc_logic;
	uint32_t	ring_profile_key; /* from vma_add_ring_profile(); once */
	uint32_t	user_id;	/* with RING_LOGIC_PER_USER_ID: sockets
					 * with the same id share a ring */
	uint32_t	ingress:1;	/* applies to the receive ring */
	uint32_t	engress:1;	/* ... to the send ring ("egress") */
	uint32_t	reserved:30;
};

/* What vma_api_t.vma_modify_ring() changes (comp_bit_mask). */
typedef enum {
	VMA_MODIFY_RING_CQ_MODERATION	= 1 << 0,
	VMA_MODIFY_RING_CQ_ARM		= 1 << 1
} vma_modify_ring_mask;

/* Interrupt moderation: signal after this many packets or this long. */
struct vma_cq_moderation_attr {
	uint32_t	cq_moderation_count;
	uint32_t	cq_moderation_period_usec;
};

/*
 * Arming a ring's notification takes no argument. An empty structure:
 * 0 bytes in GNU C, 1 in C++ (as with libvma's header).
 */
__extension__ struct vma_cq_arm_attr {
};

/* vma_api_t.vma_modify_ring()'s argument. */
struct vma_modify_ring_attr {
	uint32_t	comp_bit_mask;	/* vma_modify_ring_mask */
	int		ring_fd;	/* the ring to change */
	__extension__ union {		/* as comp_bit_mask says */
		struct vma_cq_moderation_attr	cq_moderation;
		struct vma_cq_arm_attr		cq_arm;
	};
};

/* Send pacing, in the units named (libvma: SO_MAX_PACING_RATE). */
struct vma_rate_limit_t {
	uint32_t	rate;		/* kbit/s */
	uint32_t	max_burst_sz;	/* bytes */
	uint16_t	typical_pkt_sz;	/* bytes */
};

/* Ring profiles (vma_api_t.vma_add_ring_profile()). */
struct vma_packet_queue_ring_attr {
	uint32_t	comp_mask;
};

struct vma_external_mem_attr {
	uint32_t	comp_mask;
};

/* vma_ring_type_attr.comp_mask: no bit defined yet. */
typedef enum {
	VMA_RING_ATTR_LAST
} vma_ring_type_attr_mask;

/* The kind of ring a profile describes. */
typedef enum {
	VMA_RING_PACKET,		/* the usual ring of packets */
	VMA_RING_EXTERNAL_MEM		/* a ring on the caller's memory */
} vma_ring_type;

struct vma_ring_type_attr {
	uint32_t	comp_mask;	/* vma_ring_type_attr_mask */
	vma_ring_type	ring_type;
	__extension__ union {		/* as ring_type says */
		struct vma_packet_queue_ring_attr	ring_pktq;
		struct vma_external_mem_attr		ring_ext;
	};
};

/* ===== Direct access to a ring's hardware queues ========================= */
/*
 * What vma_api_t.get_ring_direct_descriptors() fills in: a Mellanox NIC's
 * queues as the device maps them. Plain structures of pointers and
 * numbers; nothing from the verbs headers is needed. A ring not backed by
 * such a device has none of this to give.
 */

/* dev_data.device_cap bits. */
typedef enum {
	VMA_HW_PP_EN		= 1 << 0,	/* packet pacing */
	VMA_HW_PP_BURST_EN	= 1 << 3	/* ... with a burst size */
} mlx_hw_device_cap;

struct dev_data {
	uint32_t	vendor_id;
	uint32_t	vendor_part_id;
	uint32_t	device_cap;	/* mlx_hw_device_cap */
};

/* A completion queue. */
struct hw_cq_data {
	void			*buf;		/* the entries */
	volatile uint32_t	*dbrec;		/* doorbell record */
	uint32_t		cq_size;	/* entries */
	uint32_t		cqe_size;	/* bytes per entry */
	uint32_t		cqn;		/* its number */
	void			*uar;		/* doorbell page */
	uint32_t		*cons_idx;	/* consumer index, for arming */
};

/* A work queue and its completion queue. */
struct hw_wq_data {
	void			*buf;		/* the entries */
	uint32_t		wqe_cnt;	/* entries */
	uint32_t		stride;		/* bytes per entry */
	volatile uint32_t	*dbrec;		/* doorbell record */
	struct hw_cq_data	cq_data;
};

/* The receive queue. */
struct hw_rq_data {
	struct hw_wq_data	wq_data;
	uint32_t		*head;
	uint32_t		*tail;
};

/* The send queue, and its BlueFlame register. */
struct hw_sq_data {
	struct hw_wq_data	wq_data;
	uint32_t		sq_num;
	struct {
		void		*reg;
		uint32_t	size;
		uint32_t	offset;
	} bf;
};

/*
 * vma_mlx_hw_device_data.valid_mask. These are counted, 0, 1, 2, not bit
 * values (so DATA_VALID_DEV is 0): the ABI defines them so.
 */
typedef enum {
	DATA_VALID_DEV,
	DATA_VALID_SQ,
	DATA_VALID_RQ
} vma_mlx_hw_valid_data_mask;

struct vma_mlx_hw_device_data {
	uint32_t		valid_mask;	/* vma_mlx_hw_valid_data_mask */
	struct dev_data		dev_data;
	struct hw_sq_data	sq_data;
	struct hw_rq_data	rq_data;
};

/* ===== vma_api_t.ioctl() requests ======================================== */

/* vma_cmsg_ioctl_user_alloc_t.flags: the pools to allocate with them. */
enum {
	VMA_IOCTL_USER_ALLOC_FLAG_TX = 1 << 0,
	VMA_IOCTL_USER_ALLOC_FLAG_RX = 1 << 1
};

/*
 * CMSG_VMA_IOCTL_USER_ALLOC's data: the library's buffer pools come from
 * memalloc() and go back through memfree(). Only before those pools
 * exist (libvma: before the process's first socket(), pipe() or
 * epoll_create*(); libvmak: before its first UDP socket). Packed:
 * memalloc sits at byte 1.
 */
struct __attribute__((packed)) vma_cmsg_ioctl_user_alloc_t {
	uint8_t	flags;			/* VMA_IOCTL_USER_ALLOC_FLAG_* */
	void	*(*memalloc)(size_t);
	void	(*memfree)(void *);
};

/* ===== The table of calls ================================================ */

/*
 * vma_api_t.vma_extra_supported_mask: one bit per call of the table that
 * works. Bits 15 and 19 are not used here (older libvma releases had two
 * more calls in the table).
 */
typedef enum {
	VMA_EXTRA_API_REGISTER_RECV_CALLBACK		= 1 << 0,
	VMA_EXTRA_API_RECVFROM_ZCOPY			= 1 << 1,
	VMA_EXTRA_API_FREE_PACKETS			= 1 << 2,
	VMA_EXTRA_API_ADD_CONF_RULE			= 1 << 3,
	VMA_EXTRA_API_THREAD_OFFLOAD			= 1 << 4,
	VMA_EXTRA_API_DUMP_FD_STATS			= 1 << 5,
	VMA_EXTRA_API_SOCKETXTREME_POLL			= 1 << 6,
	VMA_EXTRA_API_SOCKETXTREME_FREE_VMA_PACKETS	= 1 << 7,
	VMA_EXTRA_API_SOCKETXTREME_REF_VMA_BUFF		= 1 << 8,
	VMA_EXTRA_API_SOCKETXTREME_FREE_VMA_BUFF	= 1 << 9,
	VMA_EXTRA_API_GET_SOCKET_RINGS_NUM		= 1 << 10,
	VMA_EXTRA_API_GET_SOCKET_RINGS_FDS		= 1 << 11,
	VMA_EXTRA_API_GET_SOCKET_TX_RING_FD		= 1 << 12,
	VMA_EXTRA_API_GET_SOCKET_NETWORK_HEADER		= 1 << 13,
	VMA_EXTRA_API_GET_RING_DIRECT_DESCRIPTORS	= 1 << 14,
	VMA_EXTRA_API_ADD_RING_PROFILE			= 1 << 16,
	VMA_EXTRA_API_REGISTER_MEMORY_ON_RING		= 1 << 17,
	VMA_EXTRA_API_DEREGISTER_MEMORY_ON_RING		= 1 << 18,
	VMA_EXTRA_API_MODIFY_RING			= 1 << 20,
	VMA_EXTRA_API_IOCTL				= 1 << 21
} vma_extra_api_mask;

/*
 * The library's calls, as vma_get_api() returns them: packed, 8 bytes a
 * slot, in this order (the order is the ABI: libvma's releases have
 * differed in it, which is what vma_extra_supported_mask is for). Unless
 * said otherwise a call returns 0, or -1 with errno set (EINVAL for an fd
 * the library does not offload).
 */
struct __attribute__((packed)) vma_api_t {
	/*
	 * Install (callback) or remove (NULL) socket s's receive callback;
	 * context is handed to every call of it.
	 */
	int (*register_recv_callback)(int s, vma_recv_callback_t callback,
				      void *context);

	/*
	 * recvfrom() that hands out the library's buffers instead of copying.
	 * *flags takes recvmsg()'s flags plus MSG_VMA_ZCOPY_FORCE. When the
	 * data was not copied, MSG_VMA_ZCOPY is set in *flags, buf (len bytes)
	 * holds a struct vma_packets_t with as many pieces as fit, and the
	 * return is their total length; the packets go back by
	 * free_packets(). Otherwise buf holds a copy, as from recvfrom(), and
	 * the return is its length (unless MSG_VMA_ZCOPY_FORCE said no copy).
	 * 0: nothing received. from/fromlen as recvfrom()'s.
	 */
	int (*recvfrom_zcopy)(int s, void *buf, size_t len, int *flags,
			      struct sockaddr *from, socklen_t *fromlen);

	/*
	 * Give back count packets received on s (by recvfrom_zcopy(), or
	 * held by a receive callback). ENOENT: a packet did not come from s.
	 */
	int (*free_packets)(int s, struct vma_packet_t *pkts, size_t count);

	/*
	 * Add one line of libvma.conf syntax (NUL-terminated) after the
	 * rules read at start (the first rule that matches a socket
	 * decides); sockets that already applied the rules keep what they
	 * got. Non-zero on failure.
	 */
	int (*add_conf_rule)(const char *config_line);

	/*
	 * From now on, sockets created by thread tid are offloaded (offload
	 * 1, the rules still apply) or not (0); existing sockets keep theirs.
	 * Non-zero on failure.
	 */
	int (*thread_offload)(int offload, pthread_t tid);

	/*
	 * Take up to ncompletions completions of fd (a ring, a socket or an
	 * epoll fd) into completions; returns how many. A completion can
	 * carry several events at once (a packet and EPOLLOUT, say). A
	 * received packet comes with VMA_SOCKETXTREME_PACKET: its buffers
	 * stay the application's until socketxtreme_free_vma_packets() (and
	 * socketxtreme_free_vma_buff() for buffers it took a reference on).
	 * A listening socket accepts connections by itself and each new one
	 * is reported with VMA_SOCKETXTREME_NEW_CONNECTION_ACCEPTED: do not
	 * call accept() on it, it gets no EPOLLIN. EOPNOTSUPP: SocketXtreme
	 * is not enabled.
	 */
	int (*socketxtreme_poll)(int fd, struct vma_completion_t *completions,
				 unsigned int ncompletions, int flags);

	/* How many rings socket fd receives from (0: none, or not ours). */
	int (*get_socket_rings_num)(int fd);

	/*
	 * Write the fds of the rings socket fd receives from into ring_fds
	 * (room for ring_fds_sz); returns how many were written.
	 */
	int (*get_socket_rings_fds)(int fd, int *ring_fds, int ring_fds_sz);

	/*
	 * The fd of the ring sock_fd sends to `to` on (after connect() or a
	 * group join). ENODATA: no ring.
	 */
	int (*get_socket_tx_ring_fd)(int sock_fd, struct sockaddr *to,
				     socklen_t tolen);

	/*
	 * Give back num packets from socketxtreme_poll(): the socket's
	 * receive queue and window are updated, and each buffer drops one
	 * reference (freed at zero). EINVAL: NULL; EOPNOTSUPP: SocketXtreme
	 * is not enabled.
	 */
	int (*socketxtreme_free_vma_packets)(struct vma_packet_desc_t *packets,
					     int num);

	/*
	 * Take one more reference on buff, which then outlives
	 * socketxtreme_free_vma_packets(); returns the new count. Errors as
	 * above.
	 */
	int (*socketxtreme_ref_vma_buff)(struct vma_buff_t *buff);

	/*
	 * Drop one reference on buff; returns the new count, 0 meaning the
	 * buffer is freed. Errors as above.
	 */
	int (*socketxtreme_free_vma_buff)(struct vma_buff_t *buff);

	/*
	 * Log the statistics of fd at log_level, a level of libvma's
	 * logger. 0 for any fd once the library runs (an fd it does not
	 * know logs nothing).
	 */
	int (*dump_fd_stats)(int fd, int log_level);

	/*
	 * Register ring profile *profile; its handle is written to *key, for
	 * struct vma_ring_alloc_logic_attr.ring_profile_key.
	 */
	int (*vma_add_ring_profile)(struct vma_ring_type_attr *profile,
				    int *key);

	/*
	 * Copy the headers the library puts in front of connected socket
	 * fd's payload to ptr. *len: the room at ptr on entry, the headers'
	 * size on return (ptr NULL just asks the size). ENOBUFS: too small;
	 * ENOTCONN: not connected; EINVAL: not a socket the library has.
	 */
	int (*get_socket_network_header)(int fd, void *ptr, uint16_t *len);

	/* Fill *data with ring fd's hardware queues. */
	int (*get_ring_direct_descriptors)(int fd,
					   struct vma_mlx_hw_device_data *data);

	/*
	 * Register length bytes at addr with ring fd's device; *key is what
	 * to use to refer to that memory.
	 */
	int (*register_memory_on_ring)(int fd, void *addr, size_t length,
				       uint32_t *key);

	/* Undo register_memory_on_ring() (the memory itself stays). */
	int (*deregister_memory_on_ring)(int fd, void *addr, size_t length);

	/* Change a ring as *mr_data says: 0, -1, or 1 when busy. */
	int (*vma_modify_ring)(struct vma_modify_ring_attr *mr_data);

	/*
	 * Not a call: vma_extra_api_mask bits, one per slot above (and
	 * below) that may be used. libvma sets the bit of each slot it fills
	 * in; libvmak fills in every slot and sets the bits of the calls
	 * that work.
	 */
	uint64_t vma_extra_supported_mask;

	/*
	 * Requests to the library as control messages: cmsg_hdr points to
	 * cmsg_len bytes of ancillary data (struct cmsghdr entries, built
	 * and walked with the CMSG_* macros only), each a request such as
	 * CMSG_VMA_IOCTL_USER_ALLOC.
	 */
	int (*ioctl)(void *cmsg_hdr, size_t cmsg_len);
};

/*
 * The library's table of calls, or NULL when no such library is in the
 * process. The library answers getsockopt(-1, SOL_SOCKET, SO_VMA_GET_API)
 * with the table's address: the question reaches it when it is preloaded
 * or linked in. A program that dlopen()s the library asks that copy's
 * getsockopt() (found with dlsym()) the same question instead.
 */
static inline struct vma_api_t *vma_get_api(void)
{
	struct vma_api_t *api = NULL;
	socklen_t api_len = sizeof(api);

	if (getsockopt(-1, SOL_SOCKET, SO_VMA_GET_API, &api, &api_len) < 0)
		return NULL;
	return api;
}

#endif /* VMA_EXTRA_H */
