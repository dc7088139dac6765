// SPDX-License-Identifier: GPL-2.0
/*
 * Host ABI test of lib/include/mellanox/vma_extra.h, vmak's rendering of
 * libvma's extra API: every structure's size and alignment, every member's
 * offset, size and type, every vma_api_t slot, every bit-field's bits, every
 * enumeration's size and sign, every enumerator and every macro number.
 *
 * The numbers are libvma's: they were read once from a throwaway program
 * built against libvma's own vma_extra.h on x86_64, and are written here by
 * hand. They hold for any LP64 Linux (8-byte pointers, size_t and long,
 * 16-byte struct timespec), which is what vmak builds for.
 *
 * The tables below are plain C and C++: built as C this file is a kselftest
 * program that compares at run time; vma-extra-cxx.sh compiles the same
 * tables as C++ (g++ -x c++), where each entry is a static_assert and each
 * member's type must be the very same type (std::is_same).
 */
#include <mellanox/vma_extra.h>	/* first: it must need nothing else */

/*
 * One member of a structure:
 *   F(struct tag, member, offset, size, type)   a sized member
 *   X(struct tag, member, offset, type)         a flexible array member
 * `member` may name a member of an unnamed inner structure (bf.reg).
 */
#define VX_FIELDS(F, X)							\
	F(vma_cmsg_ioctl_user_alloc_t, flags, 0, 1, uint8_t)		\
	F(vma_cmsg_ioctl_user_alloc_t, memalloc, 1, 8, void *(*)(size_t)) \
	F(vma_cmsg_ioctl_user_alloc_t, memfree, 9, 8, void (*)(void *))	\
									\
	F(vma_info_t, struct_sz, 0, 8, size_t)				\
	F(vma_info_t, packet_id, 8, 8, void *)				\
	F(vma_info_t, src, 16, 8, struct sockaddr_in *)			\
	F(vma_info_t, dst, 24, 8, struct sockaddr_in *)			\
	F(vma_info_t, payload_sz, 32, 8, size_t)			\
	F(vma_info_t, socket_ready_queue_pkt_count, 40, 4, uint32_t)	\
	F(vma_info_t, socket_ready_queue_byte_count, 44, 4, uint32_t)	\
	F(vma_info_t, hw_timestamp, 48, 16, struct timespec)		\
	F(vma_info_t, sw_timestamp, 64, 16, struct timespec)		\
									\
	F(vma_packet_t, packet_id, 0, 8, void *)			\
	F(vma_packet_t, sz_iov, 8, 8, size_t)				\
	X(vma_packet_t, iov, 16, struct iovec[])			\
									\
	F(vma_packets_t, n_packet_num, 0, 8, size_t)			\
	X(vma_packets_t, pkts, 8, struct vma_packet_t[])		\
									\
	F(vma_buff_t, next, 0, 8, struct vma_buff_t *)			\
	F(vma_buff_t, payload, 8, 8, void *)				\
	F(vma_buff_t, len, 16, 2, uint16_t)				\
									\
	F(vma_packet_desc_t, num_bufs, 0, 8, size_t)			\
	F(vma_packet_desc_t, total_len, 8, 2, uint16_t)			\
	F(vma_packet_desc_t, buff_lst, 16, 8, struct vma_buff_t *)	\
	F(vma_packet_desc_t, hw_timestamp, 24, 16, struct timespec)	\
									\
	F(vma_completion_t, packet, 0, 40, struct vma_packet_desc_t)	\
	F(vma_completion_t, events, 40, 8, uint64_t)			\
	F(vma_completion_t, user_data, 48, 8, uint64_t)			\
	F(vma_completion_t, src, 56, 16, struct sockaddr_in)		\
	F(vma_completion_t, listen_fd, 72, 4, int)			\
									\
	F(vma_ring_alloc_logic_attr, comp_mask, 0, 4, uint32_t)		\
	F(vma_ring_alloc_logic_attr, ring_alloc_logic, 4, 4, ring_logic_t) \
	F(vma_ring_alloc_logic_attr, ring_profile_key, 8, 4, uint32_t)	\
	F(vma_ring_alloc_logic_attr, user_id, 12, 4, uint32_t)		\
									\
	F(vma_cq_moderation_attr, cq_moderation_count, 0, 4, uint32_t)	\
	F(vma_cq_moderation_attr, cq_moderation_period_usec, 4, 4, uint32_t) \
									\
	F(vma_modify_ring_attr, comp_bit_mask, 0, 4, uint32_t)		\
	F(vma_modify_ring_attr, ring_fd, 4, 4, int)			\
	F(vma_modify_ring_attr, cq_moderation, 8, 8, struct vma_cq_moderation_attr) \
	F(vma_modify_ring_attr, cq_arm, 8, VX_EMPTY, struct vma_cq_arm_attr) \
									\
	F(vma_rate_limit_t, rate, 0, 4, uint32_t)			\
	F(vma_rate_limit_t, max_burst_sz, 4, 4, uint32_t)		\
	F(vma_rate_limit_t, typical_pkt_sz, 8, 2, uint16_t)		\
									\
	F(vma_packet_queue_ring_attr, comp_mask, 0, 4, uint32_t)	\
	F(vma_external_mem_attr, comp_mask, 0, 4, uint32_t)		\
									\
	F(vma_ring_type_attr, comp_mask, 0, 4, uint32_t)		\
	F(vma_ring_type_attr, ring_type, 4, 4, vma_ring_type)		\
	F(vma_ring_type_attr, ring_pktq, 8, 4, struct vma_packet_queue_ring_attr) \
	F(vma_ring_type_attr, ring_ext, 8, 4, struct vma_external_mem_attr) \
									\
	F(dev_data, vendor_id, 0, 4, uint32_t)				\
	F(dev_data, vendor_part_id, 4, 4, uint32_t)			\
	F(dev_data, device_cap, 8, 4, uint32_t)				\
									\
	F(hw_cq_data, buf, 0, 8, void *)				\
	F(hw_cq_data, dbrec, 8, 8, volatile uint32_t *)			\
	F(hw_cq_data, cq_size, 16, 4, uint32_t)				\
	F(hw_cq_data, cqe_size, 20, 4, uint32_t)			\
	F(hw_cq_data, cqn, 24, 4, uint32_t)				\
	F(hw_cq_data, uar, 32, 8, void *)				\
	F(hw_cq_data, cons_idx, 40, 8, uint32_t *)			\
									\
	F(hw_wq_data, buf, 0, 8, void *)				\
	F(hw_wq_data, wqe_cnt, 8, 4, uint32_t)				\
	F(hw_wq_data, stride, 12, 4, uint32_t)				\
	F(hw_wq_data, dbrec, 16, 8, volatile uint32_t *)		\
	F(hw_wq_data, cq_data, 24, 48, struct hw_cq_data)		\
									\
	F(hw_rq_data, wq_data, 0, 72, struct hw_wq_data)		\
	F(hw_rq_data, head, 72, 8, uint32_t *)				\
	F(hw_rq_data, tail, 80, 8, uint32_t *)				\
									\
	F(hw_sq_data, wq_data, 0, 72, struct hw_wq_data)		\
	F(hw_sq_data, sq_num, 72, 4, uint32_t)				\
	F(hw_sq_data, bf.reg, 80, 8, void *)				\
	F(hw_sq_data, bf.size, 88, 4, uint32_t)				\
	F(hw_sq_data, bf.offset, 92, 4, uint32_t)			\
									\
	F(vma_mlx_hw_device_data, valid_mask, 0, 4, uint32_t)		\
	F(vma_mlx_hw_device_data, dev_data, 4, 12, struct dev_data)	\
	F(vma_mlx_hw_device_data, sq_data, 16, 96, struct hw_sq_data)	\
	F(vma_mlx_hw_device_data, rq_data, 112, 88, struct hw_rq_data)

/*
 * struct vma_api_t, slot by slot: A(index, member, type). Slot i is at
 * byte 8 * i; slot 19 is the mask, the only member that is not a call.
 */
#define VX_API(A)							\
	A(0, register_recv_callback, int (*)(int, vma_recv_callback_t, void *)) \
	A(1, recvfrom_zcopy, int (*)(int, void *, size_t, int *,	\
				     struct sockaddr *, socklen_t *))	\
	A(2, free_packets, int (*)(int, struct vma_packet_t *, size_t))	\
	A(3, add_conf_rule, int (*)(const char *))			\
	A(4, thread_offload, int (*)(int, pthread_t))			\
	A(5, socketxtreme_poll, int (*)(int, struct vma_completion_t *,	\
					unsigned int, int))		\
	A(6, get_socket_rings_num, int (*)(int))			\
	A(7, get_socket_rings_fds, int (*)(int, int *, int))		\
	A(8, get_socket_tx_ring_fd, int (*)(int, struct sockaddr *, socklen_t)) \
	A(9, socketxtreme_free_vma_packets, int (*)(struct vma_packet_desc_t *, int)) \
	A(10, socketxtreme_ref_vma_buff, int (*)(struct vma_buff_t *))	\
	A(11, socketxtreme_free_vma_buff, int (*)(struct vma_buff_t *))	\
	A(12, dump_fd_stats, int (*)(int, int))				\
	A(13, vma_add_ring_profile, int (*)(struct vma_ring_type_attr *, int *)) \
	A(14, get_socket_network_header, int (*)(int, void *, uint16_t *)) \
	A(15, get_ring_direct_descriptors,				\
	  int (*)(int, struct vma_mlx_hw_device_data *))		\
	A(16, register_memory_on_ring, int (*)(int, void *, size_t, uint32_t *)) \
	A(17, deregister_memory_on_ring, int (*)(int, void *, size_t))	\
	A(18, vma_modify_ring, int (*)(struct vma_modify_ring_attr *))	\
	A(19, vma_extra_supported_mask, uint64_t)			\
	A(20, ioctl, int (*)(void *, size_t))

#define VX_API_SLOTS	21

/* Every structure: S(tag, size, alignment). */
#define VX_STRUCTS(S)							\
	S(vma_cmsg_ioctl_user_alloc_t, 17, 1)				\
	S(vma_info_t, 80, 1)						\
	S(vma_packet_t, 16, 1)						\
	S(vma_packets_t, 8, 1)						\
	S(vma_buff_t, 24, 8)						\
	S(vma_packet_desc_t, 40, 8)					\
	S(vma_completion_t, 80, 8)					\
	S(vma_ring_alloc_logic_attr, 20, 4)				\
	S(vma_cq_moderation_attr, 8, 4)					\
	S(vma_cq_arm_attr, VX_EMPTY, 1)					\
	S(vma_modify_ring_attr, 16, 4)					\
	S(vma_rate_limit_t, 12, 4)					\
	S(vma_packet_queue_ring_attr, 4, 4)				\
	S(vma_external_mem_attr, 4, 4)					\
	S(vma_ring_type_attr, 12, 4)					\
	S(dev_data, 12, 4)						\
	S(hw_cq_data, 48, 8)						\
	S(hw_wq_data, 72, 8)						\
	S(hw_rq_data, 88, 8)						\
	S(hw_sq_data, 96, 8)						\
	S(vma_mlx_hw_device_data, 200, 8)				\
	S(vma_api_t, 168, 1)

/*
 * struct vma_cq_arm_attr has no member: 0 bytes in GNU C, 1 in C++ (a
 * difference libvma's header has too; it changes no other layout).
 */
#ifdef __cplusplus
#define VX_EMPTY	1
#else
#define VX_EMPTY	0
#endif

/* Every enumeration type: E(typedef, size, signed). */
#define VX_ENUMS(E)							\
	E(vma_recv_callback_retval_t, 4, 0)				\
	E(vma_socketxtreme_events_t, 8, 0)				\
	E(ring_logic_t, 4, 0)						\
	E(vma_ring_alloc_logic_attr_comp_mask, 4, 0)			\
	E(vma_modify_ring_mask, 4, 0)					\
	E(vma_ring_type_attr_mask, 4, 0)				\
	E(vma_ring_type, 4, 0)						\
	E(mlx_hw_device_cap, 4, 0)					\
	E(vma_mlx_hw_valid_data_mask, 4, 0)				\
	E(vma_extra_api_mask, 4, 0)

/* The other type names: T(typedef, type). */
#define VX_TYPEDEFS(T)							\
	T(vma_ring_profile_key, int)					\
	T(vma_recv_callback_t,						\
	  vma_recv_callback_retval_t (*)(int, size_t, struct iovec *,	\
					 struct vma_info_t *, void *))

/* Every enumerator and every macro number: C(name, value). */
#define VX_CONSTANTS(C)							\
	C(SO_VMA_GET_API, 2800)						\
	C(SO_VMA_USER_DATA, 2801)					\
	C(SO_VMA_RING_ALLOC_LOGIC, 2810)				\
	C(SO_VMA_RING_USER_MEMORY, 2811)				\
	C(SO_VMA_FLOW_TAG, 2820)					\
	C(SO_VMA_SHUTDOWN_RX, 2821)					\
	C(CMSG_VMA_IOCTL_USER_ALLOC, 2900)				\
	C(MSG_VMA_ZCOPY_FORCE, 0x01000000)				\
	C(MSG_VMA_ZCOPY, 0x00040000)					\
	C(VMA_SND_FLAGS_DUMMY, 0x400)					\
	C(VMA_PACKET_DROP, 0)						\
	C(VMA_PACKET_RECV, 1)						\
	C(VMA_PACKET_HOLD, 2)						\
	C(VMA_SOCKETXTREME_PACKET, 0x100000000ULL)			\
	C(VMA_SOCKETXTREME_NEW_CONNECTION_ACCEPTED, 0x200000000ULL)	\
	C(RING_LOGIC_PER_INTERFACE, 0)					\
	C(RING_LOGIC_PER_IP, 1)						\
	C(RING_LOGIC_PER_SOCKET, 10)					\
	C(RING_LOGIC_PER_USER_ID, 11)					\
	C(RING_LOGIC_PER_THREAD, 20)					\
	C(RING_LOGIC_PER_CORE, 30)					\
	C(RING_LOGIC_PER_CORE_ATTACH_THREADS, 31)			\
	C(RING_LOGIC_LAST, 32)						\
	C(VMA_RING_ALLOC_MASK_RING_PROFILE_KEY, 0x1)			\
	C(VMA_RING_ALLOC_MASK_RING_USER_ID, 0x2)			\
	C(VMA_RING_ALLOC_MASK_RING_INGRESS, 0x4)			\
	C(VMA_RING_ALLOC_MASK_RING_ENGRESS, 0x8)			\
	C(VMA_MODIFY_RING_CQ_MODERATION, 0x1)				\
	C(VMA_MODIFY_RING_CQ_ARM, 0x2)					\
	C(VMA_RING_ATTR_LAST, 0)					\
	C(VMA_RING_PACKET, 0)						\
	C(VMA_RING_EXTERNAL_MEM, 1)					\
	C(VMA_HW_PP_EN, 0x1)						\
	C(VMA_HW_PP_BURST_EN, 0x8)					\
	C(DATA_VALID_DEV, 0)						\
	C(DATA_VALID_SQ, 1)						\
	C(DATA_VALID_RQ, 2)						\
	C(VMA_IOCTL_USER_ALLOC_FLAG_TX, 0x1)				\
	C(VMA_IOCTL_USER_ALLOC_FLAG_RX, 0x2)				\
	C(VMA_EXTRA_API_REGISTER_RECV_CALLBACK, 0x1)			\
	C(VMA_EXTRA_API_RECVFROM_ZCOPY, 0x2)				\
	C(VMA_EXTRA_API_FREE_PACKETS, 0x4)				\
	C(VMA_EXTRA_API_ADD_CONF_RULE, 0x8)				\
	C(VMA_EXTRA_API_THREAD_OFFLOAD, 0x10)				\
	C(VMA_EXTRA_API_DUMP_FD_STATS, 0x20)				\
	C(VMA_EXTRA_API_SOCKETXTREME_POLL, 0x40)			\
	C(VMA_EXTRA_API_SOCKETXTREME_FREE_VMA_PACKETS, 0x80)		\
	C(VMA_EXTRA_API_SOCKETXTREME_REF_VMA_BUFF, 0x100)		\
	C(VMA_EXTRA_API_SOCKETXTREME_FREE_VMA_BUFF, 0x200)		\
	C(VMA_EXTRA_API_GET_SOCKET_RINGS_NUM, 0x400)			\
	C(VMA_EXTRA_API_GET_SOCKET_RINGS_FDS, 0x800)			\
	C(VMA_EXTRA_API_GET_SOCKET_TX_RING_FD, 0x1000)			\
	C(VMA_EXTRA_API_GET_SOCKET_NETWORK_HEADER, 0x2000)		\
	C(VMA_EXTRA_API_GET_RING_DIRECT_DESCRIPTORS, 0x4000)		\
	C(VMA_EXTRA_API_ADD_RING_PROFILE, 0x10000)			\
	C(VMA_EXTRA_API_REGISTER_MEMORY_ON_RING, 0x20000)		\
	C(VMA_EXTRA_API_DEREGISTER_MEMORY_ON_RING, 0x40000)		\
	C(VMA_EXTRA_API_MODIFY_RING, 0x100000)				\
	C(VMA_EXTRA_API_IOCTL, 0x200000)

/* The option and flag macros are plain numbers: #if can test them. */
#if SO_VMA_GET_API != 2800 || SO_VMA_USER_DATA != 2801 ||		\
	SO_VMA_RING_ALLOC_LOGIC != 2810 || SO_VMA_RING_USER_MEMORY != 2811 || \
	SO_VMA_FLOW_TAG != 2820 || SO_VMA_SHUTDOWN_RX != 2821 ||	\
	MSG_VMA_ZCOPY_FORCE != 0x01000000 || MSG_VMA_ZCOPY != 0x00040000
#error "an SO_VMA_* or MSG_VMA_* macro is not libvma's number"
#endif
#if !defined(VMA_EXTRA_H)
#error "libvma's include guard, VMA_EXTRA_H, is not defined"
#endif

#ifdef __cplusplus

/* ---- C++: the same tables, checked by the compiler --------------------- */
#include <type_traits>

#define VX_CXX_FIELD(s, m, off, size, ...)				\
	static_assert(offsetof(struct s, m) == off, #s "." #m ": offset"); \
	static_assert(sizeof(((struct s *)0)->m) == size, #s "." #m ": size"); \
	static_assert(std::is_same<decltype(((struct s *)0)->m),	\
				   __VA_ARGS__>::value, #s "." #m ": type");
#define VX_CXX_FLEX(s, m, off, ...)					\
	static_assert(offsetof(struct s, m) == off, #s "." #m ": offset"); \
	static_assert(std::is_same<decltype(((struct s *)0)->m),	\
				   __VA_ARGS__>::value, #s "." #m ": type");
#define VX_CXX_SLOT(i, m, ...)						\
	static_assert(offsetof(struct vma_api_t, m) == 8 * (i),		\
		      "vma_api_t." #m ": slot");			\
	static_assert(sizeof(((struct vma_api_t *)0)->m) == 8,		\
		      "vma_api_t." #m ": size");			\
	static_assert(std::is_same<decltype(((struct vma_api_t *)0)->m), \
				   __VA_ARGS__>::value, "vma_api_t." #m ": type");
#define VX_CXX_STRUCT(s, size, align)					\
	static_assert(sizeof(struct s) == size, #s ": size");		\
	static_assert(__alignof__(struct s) == align, #s ": alignment");
#define VX_CXX_ENUM(e, size, sgn)					\
	static_assert(sizeof(e) == size, #e ": size");			\
	static_assert(std::is_signed<std::underlying_type<e>::type>::value \
		      == (sgn), #e ": sign");
#define VX_CXX_TYPEDEF(t, ...)						\
	static_assert(std::is_same<t, __VA_ARGS__>::value, #t ": type");
#define VX_CXX_CONSTANT(name, value)					\
	static_assert((unsigned long long)(name) == (value), #name);

VX_FIELDS(VX_CXX_FIELD, VX_CXX_FLEX)
VX_API(VX_CXX_SLOT)
VX_STRUCTS(VX_CXX_STRUCT)
VX_ENUMS(VX_CXX_ENUM)
VX_TYPEDEFS(VX_CXX_TYPEDEF)
VX_CONSTANTS(VX_CXX_CONSTANT)
static_assert(offsetof(struct hw_sq_data, bf) == 80, "hw_sq_data.bf: offset");
static_assert(sizeof(((struct hw_sq_data *)0)->bf) == 16, "hw_sq_data.bf: size");
static_assert(sizeof(struct vma_api_t) == 8 * VX_API_SLOTS, "vma_api_t: slots");

/* vma_get_api() is usable as libvma's is. */
struct vma_api_t *vx_api(void);
struct vma_api_t *vx_api(void)
{
	return vma_get_api();
}

#else /* !__cplusplus */

/* ---- C: the kselftest program ------------------------------------------ */
#include <dlfcn.h>
#include <stdbool.h>

#include "harness.h"

#define VX_C_FIELD(s, m, off, size, ...)				\
	EXPECT_EQ(off, offsetof(struct s, m));				\
	EXPECT_EQ(size, sizeof(((struct s *)0)->m));			\
	EXPECT_TRUE(__builtin_types_compatible_p(			\
		__typeof__(((struct s *)0)->m), __VA_ARGS__))		\
		TH_LOG("struct %s: %s is not a %s", #s, #m, #__VA_ARGS__); \
	fields++;
#define VX_C_FLEX(s, m, off, ...)					\
	EXPECT_EQ(off, offsetof(struct s, m));				\
	EXPECT_TRUE(__builtin_types_compatible_p(			\
		__typeof__(((struct s *)0)->m), __VA_ARGS__))		\
		TH_LOG("struct %s: %s is not a %s", #s, #m, #__VA_ARGS__); \
	fields++;

TEST(every_member)
{
	int fields = 0;

	VX_FIELDS(VX_C_FIELD, VX_C_FLEX)
	/* the unnamed structure around BlueFlame's register */
	EXPECT_EQ(80, offsetof(struct hw_sq_data, bf));
	EXPECT_EQ(16, sizeof(((struct hw_sq_data *)0)->bf));
	EXPECT_EQ(8, __alignof__(((struct hw_sq_data *)0)->bf));
	fields++;
	TH_LOG("%d members", fields);
}

#define VX_C_SLOT(i, m, ...)						\
	EXPECT_EQ(8 * (i), offsetof(struct vma_api_t, m))		\
		TH_LOG("vma_api_t.%s is not slot %d", #m, i);		\
	EXPECT_EQ(8, sizeof(((struct vma_api_t *)0)->m));		\
	EXPECT_TRUE(__builtin_types_compatible_p(			\
		__typeof__(((struct vma_api_t *)0)->m), __VA_ARGS__))	\
		TH_LOG("vma_api_t.%s is not a %s", #m, #__VA_ARGS__);	\
	slots++;

TEST(api_table_slots)
{
	int slots = 0;

	VX_API(VX_C_SLOT)
	EXPECT_EQ(VX_API_SLOTS, slots);
	EXPECT_EQ(8 * VX_API_SLOTS, sizeof(struct vma_api_t));
}

#define VX_C_STRUCT(s, size, align)					\
	EXPECT_EQ(size, sizeof(struct s)) TH_LOG("struct %s", #s);	\
	EXPECT_EQ(align, __alignof__(struct s)) TH_LOG("struct %s", #s);

TEST(every_structure)
{
	VX_STRUCTS(VX_C_STRUCT)
}

/*
 * A bit-field has no offset or type to ask for: set it to all ones in a
 * zeroed structure and look at the 32-bit unit that holds it (byte 16).
 */
static uint32_t unit_with(void (*set)(struct vma_ring_alloc_logic_attr *))
{
	struct vma_ring_alloc_logic_attr a;
	uint32_t w;

	memset(&a, 0, sizeof(a));
	set(&a);
	memcpy(&w, (char *)&a + 16, sizeof(w));
	return w;
}

static void set_ingress(struct vma_ring_alloc_logic_attr *a)
{
	a->ingress = 1;
}

static void set_engress(struct vma_ring_alloc_logic_attr *a)
{
	a->engress = 1;
}

static void set_reserved(struct vma_ring_alloc_logic_attr *a)
{
	a->reserved = 0x3fffffff;
}

TEST(ring_alloc_logic_bits)
{
	struct vma_ring_alloc_logic_attr a;
	volatile uint32_t ones = 0xffffffff;

	EXPECT_EQ(0x00000001, unit_with(set_ingress));
	EXPECT_EQ(0x00000002, unit_with(set_engress));
	EXPECT_EQ(0xfffffffc, unit_with(set_reserved));
	/* widths: all ones truncate to 1, 1 and 30 bits (typeof, which
	 * EXPECT_EQ uses, takes no bit-field: hence the casts) */
	a.ingress = ones;
	a.engress = ones;
	a.reserved = ones;
	EXPECT_EQ(1, (uint32_t)a.ingress);
	EXPECT_EQ(1, (uint32_t)a.engress);
	EXPECT_EQ(0x3fffffff, (uint32_t)a.reserved);
}

/* unsigned: -1 converts to the type's largest value */
#define VX_C_ENUM(e, size, sgn)					\
	EXPECT_EQ(size, sizeof(e)) TH_LOG("%s", #e);			\
	EXPECT_EQ(!(sgn), (e)-1 > (e)0) TH_LOG("%s", #e);

TEST(every_enumeration)
{
	VX_ENUMS(VX_C_ENUM)
}

#define VX_C_TYPEDEF(t, ...)						\
	EXPECT_TRUE(__builtin_types_compatible_p(t, __VA_ARGS__))	\
		TH_LOG("%s is not %s", #t, #__VA_ARGS__);

TEST(typedefs)
{
	VX_TYPEDEFS(VX_C_TYPEDEF)
}

#define VX_C_CONSTANT(name, value)					\
	EXPECT_EQ((unsigned long long)(value), (unsigned long long)(name)) \
		TH_LOG("%s", #name);					\
	constants++;

TEST(every_constant)
{
	int constants = 0;

	VX_CONSTANTS(VX_C_CONSTANT)
	TH_LOG("%d constants", constants);
}

/*
 * vma_get_api(): getsockopt(-1, SOL_SOCKET, SO_VMA_GET_API) on a pointer,
 * with the length of a pointer; NULL when the call fails, else the pointer
 * as the call left it (still NULL if it wrote none). This program's own
 * getsockopt() stands in for the library's while armed, and hands the call
 * to the C library's otherwise.
 */
static struct {
	bool armed;
	int ret;			/* what to return */
	bool write;			/* whether to write ptr */
	void *ptr;
	socklen_t len_out;		/* what to leave in *optlen */
	/* what the call got */
	int calls, fd, level, name;
	socklen_t len_in;
} fake;

int getsockopt(int fd, int level, int name, void *restrict val,
	       socklen_t *restrict len)
{
	int (*real)(int, int, int, void *, socklen_t *);

	if (!fake.armed) {
		real = (int (*)(int, int, int, void *, socklen_t *))
			dlsym(RTLD_NEXT, "getsockopt");
		return real(fd, level, name, val, len);
	}
	fake.calls++;
	fake.fd = fd;
	fake.level = level;
	fake.name = name;
	fake.len_in = *len;
	if (fake.write)
		memcpy(val, &fake.ptr, sizeof(fake.ptr));
	*len = fake.len_out;
	return fake.ret;
}

static void arm(int ret, bool write, void *ptr)
{
	memset(&fake, 0, sizeof(fake));
	fake.armed = true;
	fake.ret = ret;
	fake.write = write;
	fake.ptr = ptr;
	fake.len_out = sizeof(void *);
}

TEST(get_api_without_library)
{
	/* no libvmak here: the C library says EBADF */
	errno = 0;
	EXPECT_EQ(NULL, vma_get_api());
	EXPECT_EQ(EBADF, errno);
}

TEST(get_api_asks_for_the_table)
{
	static struct vma_api_t table;

	arm(0, true, &table);
	EXPECT_EQ(&table, vma_get_api());
	EXPECT_EQ(1, fake.calls);
	EXPECT_EQ(-1, fake.fd);
	EXPECT_EQ(1, fake.level);		/* SOL_SOCKET */
	EXPECT_EQ(2800, fake.name);		/* SO_VMA_GET_API */
	EXPECT_EQ(8, fake.len_in);		/* sizeof(struct vma_api_t *) */
	fake.armed = false;
}

TEST(get_api_failure_is_null)
{
	static struct vma_api_t table;

	arm(-1, true, &table);		/* a pointer written, then -1 */
	EXPECT_EQ(NULL, vma_get_api());
	EXPECT_EQ(1, fake.calls);
	arm(-2, false, NULL);		/* any negative return */
	EXPECT_EQ(NULL, vma_get_api());
	fake.armed = false;
}

TEST(get_api_success_as_left)
{
	static struct vma_api_t table;

	arm(0, false, NULL);		/* success, nothing written */
	EXPECT_EQ(NULL, vma_get_api());
	arm(1, true, &table);		/* only a negative return fails */
	EXPECT_EQ(&table, vma_get_api());
	arm(0, true, &table);		/* the length left is not looked at */
	fake.len_out = 4;
	EXPECT_EQ(&table, vma_get_api());
	fake.armed = false;
}

TEST_HARNESS_MAIN

#endif /* __cplusplus */
