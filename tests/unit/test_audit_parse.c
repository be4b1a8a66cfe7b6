/* sensors/: the pure parsers of proc connector, /proc and fanotify bytes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/fanotify.h>
#include <linux/netlink.h>

#include "sensors/file/fanparse.h"
#include "sensors/file/mountwatch.h"
#include "sensors/process/cnproc.h"
#include "sensors/shared/procparse.h"

/* One proc connector datagram: nlmsghdr + cn_msg + proc_event of what, data bytes. */
static size_t mk_cn(uint8_t *out, uint32_t seq, uint32_t what, uint32_t cpu,
		    const void *data, size_t dlen)
{
	size_t pe = offsetof(struct proc_event, event_data) + dlen;
	struct nlmsghdr nh = { .nlmsg_len = (uint32_t)(NLMSG_HDRLEN + sizeof(struct cn_msg) + pe),
			       .nlmsg_type = NLMSG_DONE };
	struct cn_msg cn = { .id = { CN_IDX_PROC, CN_VAL_PROC }, .seq = seq,
			     .len = (uint16_t)pe };
	uint64_t ts = 123456789;
	uint8_t *p = out + NLMSG_HDRLEN + sizeof(cn);

	memset(out, 0, NLMSG_ALIGN(nh.nlmsg_len));
	memcpy(out, &nh, sizeof(nh));
	memcpy(out + NLMSG_HDRLEN, &cn, sizeof(cn));
	memcpy(p + offsetof(struct proc_event, what), &what, 4);
	memcpy(p + offsetof(struct proc_event, cpu), &cpu, 4);
	memcpy(p + offsetof(struct proc_event, timestamp_ns), &ts, 8);
	memcpy(p + offsetof(struct proc_event, event_data), data, dlen);
	return NLMSG_ALIGN(nh.nlmsg_len);
}

static void test_cn_fork_exec_exit(void **state)
{
	int32_t fork[4] = { 10, 10, 11, 11 }, exec[2] = { 11, 11 };
	uint32_t ex[6] = { 11, 11, 0x0100, 17, 10, 10 };
	uint8_t buf[512];
	struct cn_event ev[4];
	size_t len = 0, n, bad = 0;

	(void)state;
	len += mk_cn(buf + len, 5, PROC_EVENT_FORK, 1, fork, sizeof(fork));
	len += mk_cn(buf + len, 6, PROC_EVENT_EXEC, 1, exec, sizeof(exec));
	len += mk_cn(buf + len, 7, PROC_EVENT_EXIT, 1, ex, sizeof(ex));
	assert_int_equal(cn_decode(buf, len, ev, 4, &n, &bad), 0);
	assert_int_equal(n, 3);
	assert_int_equal(bad, 0);
	assert_int_equal(ev[0].kind, CN_FORK);
	assert_int_equal(ev[0].ptgid, 10);
	assert_int_equal(ev[0].pid, 11);
	assert_int_equal(ev[1].kind, CN_EXEC);
	assert_int_equal(ev[1].tgid, 11);
	assert_int_equal(ev[1].ts_ns, 123456789);
	assert_int_equal(ev[2].kind, CN_EXIT);
	assert_int_equal(ev[2].exit_code, 0x0100);
	assert_int_equal(ev[2].ptgid, 10);
	assert_int_equal(ev[2].seq, 7);
}

static void test_cn_short_and_foreign(void **state)
{
	int32_t fork[4] = { 1, 1, 2, 2 };
	uint8_t buf[256];
	struct cn_event ev[2];
	size_t len, n, bad = 0;
	struct cn_msg cn;

	(void)state;
	/* A fork event cut short: skipped and counted. */
	len = mk_cn(buf, 1, PROC_EVENT_FORK, 0, fork, 8);
	assert_int_equal(cn_decode(buf, len, ev, 2, &n, &bad), 0);
	assert_int_equal(n, 0);
	assert_int_equal(bad, 1);
	/* Another connector's message. */
	len = mk_cn(buf, 1, PROC_EVENT_FORK, 0, fork, sizeof(fork));
	memcpy(&cn, buf + NLMSG_HDRLEN, sizeof(cn));
	cn.id.idx = 7;
	memcpy(buf + NLMSG_HDRLEN, &cn, sizeof(cn));
	assert_int_equal(cn_decode(buf, len, ev, 2, &n, &bad), 0);
	assert_int_equal(n, 0);
	/* nlmsg_len beyond the datagram: framing error. */
	len = mk_cn(buf, 1, PROC_EVENT_FORK, 0, fork, sizeof(fork));
	assert_int_equal(cn_decode(buf, len - 8, ev, 2, &n, &bad), -EINVAL);
}

static void test_cn_seq_and_exit(void **state)
{
	struct cn_seq *s;
	int code, sig;

	(void)state;
	assert_int_equal(cn_seq_new(&s, 2), 0);
	assert_int_equal(cn_seq_feed(s, 0, 100), 0);
	assert_int_equal(cn_seq_feed(s, 0, 101), 0);
	assert_int_equal(cn_seq_feed(s, 0, 105), 3);
	assert_int_equal(cn_seq_feed(s, 1, UINT32_MAX), 0);
	assert_int_equal(cn_seq_feed(s, 1, 1), 1);   /* wraps: 0 was missed */
	assert_int_equal(cn_seq_feed(s, 9, 1), 0);   /* unknown cpu: ignored */
	cn_seq_free(s);
	cn_exit_decode(3 << 8, &code, &sig);
	assert_int_equal(code, 3);
	assert_int_equal(sig, 0);
	cn_exit_decode(9, &code, &sig);
	assert_int_equal(code, -1);
	assert_int_equal(sig, 9);
	cn_exit_decode(0x80 | 11, &code, &sig);
	assert_int_equal(sig, 11);
}

static void test_proc_stat(void **state)
{
	const char *s = "42 (a) b) (c) S 7 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
			"98765 1000 100 18446744073709551615\n";
	struct proc_stat_info st;

	(void)state;
	assert_int_equal(proc_stat_parse(s, strlen(s), &st), 0);
	assert_string_equal(st.comm, "a) b) (c");
	assert_int_equal(st.ppid, 7);
	assert_int_equal(st.start_ticks, 98765);
	assert_int_equal(proc_stat_parse(s, 30, &st), -EINVAL);
	assert_int_equal(proc_stat_parse("1 (x", 4, &st), -EINVAL);
	assert_int_equal(proc_stat_parse("", 0, &st), -EINVAL);
}

static void test_proc_status(void **state)
{
	const char *s = "Name:\tid\nUmask:\t0022\nUid:\t65534\t0\t0\t0\nGid:\t0\t0\t0\t0\n";
	uint32_t r, e;

	(void)state;
	assert_int_equal(proc_status_uids(s, strlen(s), &r, &e), 0);
	assert_int_equal(r, 65534);
	assert_int_equal(e, 0);
	assert_int_equal(proc_status_uids("Name:\tUid:\n", 11, &r, &e), -EINVAL);
	assert_int_equal(proc_status_uids("Uid:\t1", 6, &r, &e), -EINVAL);
}

static void test_cmdline(void **state)
{
	const char buf[] = "sh\0-c\0\0a\nb";   /* last arg without its NUL */
	const char *a;
	size_t off = 0, n, k = 0;
	const char *want[] = { "sh", "-c", "", "a\nb" };

	(void)state;
	while (cmdline_next(buf, sizeof(buf) - 1, &off, &a, &n)) {
		assert_true(k < 4);
		assert_int_equal(n, strlen(want[k]));
		assert_memory_equal(a, want[k], n);
		k++;
	}
	assert_int_equal(k, 4);
	off = 0;
	assert_false(cmdline_next(buf, 0, &off, &a, &n));
}

/* One fanotify event with one DFID_NAME record of handle bytes hb and name. */
static size_t mk_fan(uint8_t *out, uint64_t mask, uint8_t type, const char *name, size_t hb)
{
	size_t nl = strlen(name) + 1;
	size_t ilen = sizeof(struct fanotify_event_info_fid) + 8 + hb + nl;
	struct fanotify_event_metadata m = { .vers = FANOTIFY_METADATA_VERSION,
					     .metadata_len = sizeof(m), .mask = mask,
					     .fd = FAN_NOFD, .pid = 77 };
	struct fanotify_event_info_header h = { .info_type = type, .len = (uint16_t)ilen };
	int32_t fsid[2] = { 1, 2 };
	uint32_t hbytes = (uint32_t)hb;
	uint8_t *p = out + sizeof(m);

	m.event_len = (uint32_t)(sizeof(m) + ilen);
	memset(out, 0, m.event_len);
	memcpy(out, &m, sizeof(m));
	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), fsid, sizeof(fsid));
	memcpy(p + sizeof(struct fanotify_event_info_fid), &hbytes, 4);
	memcpy(p + sizeof(struct fanotify_event_info_fid) + 8 + hb, name, nl);
	return m.event_len;
}

static void test_fan_walk(void **state)
{
	uint8_t buf[512];
	struct fan_rec r;
	size_t len = 0, off = 0;

	(void)state;
	len += mk_fan(buf, FAN_CREATE, FAN_EVENT_INFO_TYPE_DFID_NAME, "new.txt", 8);
	len += mk_fan(buf + len, FAN_DELETE, FAN_EVENT_INFO_TYPE_DFID_NAME, "old", 12);
	assert_int_equal(fan_next(buf, len, &off, &r), 1);
	assert_int_equal(r.mask, FAN_CREATE);
	assert_int_equal(r.pid, 77);
	assert_true(r.dfid.set);
	assert_string_equal(r.dfid.name, "new.txt");
	assert_int_equal(r.dfid.handle_len, 16);
	assert_int_equal(r.dfid.fsid, (1ull << 32) | 2);
	assert_int_equal(fan_next(buf, len, &off, &r), 1);
	assert_string_equal(r.dfid.name, "old");
	assert_int_equal(fan_next(buf, len, &off, &r), 0);
	/* A handle claiming more bytes than its record holds. */
	len = mk_fan(buf, FAN_CREATE, FAN_EVENT_INFO_TYPE_DFID_NAME, "x", 8);
	memset(buf + sizeof(struct fanotify_event_metadata) +
	       sizeof(struct fanotify_event_info_fid), 0xff, 4);
	off = 0;
	assert_int_equal(fan_next(buf, len, &off, &r), -EINVAL);
	/* Truncated buffer: the event does not fit, nothing read. */
	off = 0;
	assert_int_equal(fan_next(buf, len - 1, &off, &r), -EINVAL);
}

static void test_sensitive(void **state)
{
	char *p[] = { "/etc", "~/.ssh", "~/.docker/config.json", "/srv/secret/" };

	(void)state;
	assert_true(audit_path_sensitive("/etc", p, 4));
	assert_true(audit_path_sensitive("/etc/shadow", p, 4));
	assert_false(audit_path_sensitive("/etcetera", p, 4));
	assert_true(audit_path_sensitive("/root/.ssh/id_rsa", p, 4));
	assert_true(audit_path_sensitive("/home/al/.ssh/config", p, 4));
	assert_false(audit_path_sensitive("/home/.ssh/x", p, 4));
	assert_false(audit_path_sensitive("/home/al/x/.ssh/config", p, 4));
	assert_true(audit_path_sensitive("/home/al/.docker/config.json", p, 4));
	assert_true(audit_path_sensitive("/srv/secret/a", p, 4));
	assert_false(audit_path_sensitive("/srv/secretive", p, 4));
}

static void test_mountinfo(void **state)
{
	const char *l = "36 35 98:0 /mnt1 /a\\040b rw,noatime master:1 shared:2 - tmpfs sg\\011x rw";
	const char *bad = "36 35 98:0 /mnt1 /a rw,noatime master:1 tmpfs src rw";
	const char *ro = "105 26 0:41 / /t/ro ro,relatime - tmpfs tmpfs ro,size=1024k";
	struct mount_entry m;

	(void)state;
	assert_int_equal(mountinfo_line(l, strlen(l), &m), 0);
	assert_string_equal(m.target, "/a b");
	assert_string_equal(m.fstype, "tmpfs");
	assert_string_equal(m.source, "sg\tx");
	assert_int_equal(m.dev_major, 98);
	assert_int_equal(m.dev_minor, 0);
	assert_false(m.ro);
	assert_int_equal(mountinfo_line(ro, strlen(ro), &m), 0);
	assert_true(m.ro);
	assert_int_equal(m.dev_major, 0);
	assert_int_equal(m.dev_minor, 41);
	assert_int_equal(mountinfo_line(bad, strlen(bad), &m), -EINVAL);
	assert_int_equal(mountinfo_line(l, 20, &m), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cn_fork_exec_exit),
		cmocka_unit_test(test_cn_short_and_foreign),
		cmocka_unit_test(test_cn_seq_and_exit),
		cmocka_unit_test(test_proc_stat),
		cmocka_unit_test(test_proc_status),
		cmocka_unit_test(test_cmdline),
		cmocka_unit_test(test_fan_walk),
		cmocka_unit_test(test_sensitive),
		cmocka_unit_test(test_mountinfo),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
