// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Module discovery: the family number and the INFO command. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/genetlink.h>

#include "linux/vmak.h"
#include "internal.h"
#include "nl.h"
#include "sys.h"
#include "vmak/ctl.h"

static int info_attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	if (mnl_attr_type_valid(attr, VMAK_A_INFO_MAX) < 0)
		return MNL_CB_OK;
	switch (type) {
	case VMAK_A_INFO_VERSION:
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
			return MNL_CB_ERROR;
		break;
	case VMAK_A_INFO_FAMILY:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
			return MNL_CB_ERROR;
		break;
	case VMAK_A_INFO_PINNED_PAGES:
		if (mnl_attr_validate(attr, MNL_TYPE_U64) < 0)
			return MNL_CB_ERROR;
		break;
	case VMAK_A_INFO_HOOKED_DEVICES:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
			return MNL_CB_ERROR;
		break;
	}
	tb[type] = attr;
	return MNL_CB_OK;
}

static int info_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[VMAK_A_INFO_MAX + 1] = {};
	struct vmak_info *info = data;

	if (mnl_attr_parse(nlh, sizeof(struct genlmsghdr), info_attr_cb, tb) < 0)
		return MNL_CB_ERROR;
	if (!tb[VMAK_A_INFO_VERSION] || !tb[VMAK_A_INFO_FAMILY]) {
		errno = EPROTO;
		return MNL_CB_ERROR;
	}
	snprintf(info->version, sizeof(info->version), "%s",
		 mnl_attr_get_str(tb[VMAK_A_INFO_VERSION]));
	info->family = mnl_attr_get_u32(tb[VMAK_A_INFO_FAMILY]);
	if (tb[VMAK_A_INFO_PINNED_PAGES])
		info->pinned_pages = mnl_attr_get_u64(tb[VMAK_A_INFO_PINNED_PAGES]);
	if (tb[VMAK_A_INFO_HOOKED_DEVICES])
		info->hooked_devices = mnl_attr_get_u32(tb[VMAK_A_INFO_HOOKED_DEVICES]);
	return MNL_CB_OK;
}

VMAK_API int vmak_info_get(struct vmak_info *info)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct vmak_info out = { .sz = sizeof(out) };
	struct vmak_nl nl;
	int err;

	if (info->sz < sizeof(info->sz))
		return -EINVAL;
	err = vmak_nl_open(&nl);
	if (err)
		return err;
	err = vmak_nl_talk(&nl, vmak_nl_msg(&nl, buf, VMAK_CMD_INFO_GET, 0),
			   info_cb, &out);
	vmak_nl_close(&nl);
	if (!err && !out.family)
		err = -EPROTO;
	VMAK_SZ_OUT(vmak_info, info, &out);
	return err;
}

/* Parse the sysfs parameter: a decimal number and a newline. */
int vmak_parse_family(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || (*end && *end != '\n') || v <= 0 || v > 255)
		return -EINVAL;
	return (int)v;
}

VMAK_API int vmak_family(void)
{
	static int cached;
	struct vmak_info info = { .sz = sizeof(info) };
	char buf[32];
	FILE *f;
	int fam;

	fam = __atomic_load_n(&cached, __ATOMIC_RELAXED);
	if (fam > 0)
		return fam;

	f = fopen(VMAK_FAMILY_SYSFS, "re");
	if (f) {
		fam = fgets(buf, sizeof(buf), f) ? vmak_parse_family(buf) : -EIO;
		vmak_sys_fclose(f);
	} else {
		fam = vmak_info_get(&info);
		if (fam == 0)
			fam = (int)info.family;
	}
	if (fam > 0)
		__atomic_store_n(&cached, fam, __ATOMIC_RELAXED);
	return fam;
}

