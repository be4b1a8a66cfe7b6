#include "daemon/daemon.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/log.h"
#include "daemon/statelock.h"
#include "journal/keystore.h"

static int replace_str(char **field, const char *val)
{
	char *copy = strdup(val);

	if (!copy)
		return -ENOMEM;
	free(*field);
	*field = copy;
	return 0;
}

/* gateway.resolvers left out: the host's (18.6); logged once, the edge. */
int daemon_host_resolvers(struct sg_config *c)
{
	char from[256];
	int ret;

	if (!c->gateway.enabled)
		return 0;   /* only the gateway uses them: a host without resolv.conf still starts */
	ret = config_host_resolvers(&c->gateway, CONFIG_RESOLV_CONF, CONFIG_RESOLVED_CONF, from,
				    sizeof(from));
	if (ret)
		log_errno(ret, "gateway.resolvers: cannot read the host's resolvers from %s", from);
	else if (!c->gateway.resolvers_set && c->gateway.enabled && !c->gateway.n_resolvers)
		log_warnx("gateway.resolvers: none in %s: sessions get no DNS", from);
	return ret;
}

int daemon_load_config(const struct daemon_opts *opts, struct sg_config **out)
{
	struct config_errors errs = CONFIG_ERRORS_INIT;
	struct sg_config *cfg = NULL;
	int ret = 0;

	if (opts->config_path) {
		ret = config_load_file(opts->config_path, &cfg, &errs);
		if (ret) {
			config_errors_print(&errs, stderr);
			if (config_errors_count(&errs) == 0)
				log_errno(ret, "%s", opts->config_path);
		}
	} else {
		cfg = config_default();
		ret = cfg ? 0 : -ENOMEM;
	}
	config_errors_free(&errs);
	if (ret == 0)
		ret = daemon_host_resolvers(cfg);
	if (ret == 0 && opts->state_dir)
		ret = replace_str(&cfg->state_dir, opts->state_dir);
	if (ret == 0 && opts->control_path)
		ret = replace_str(&cfg->control_socket, opts->control_path);
	if (ret) {
		config_free(cfg);
		return ret;
	}
	*out = cfg;
	return 0;
}

/* systemd Type=notify without linking libsystemd: one datagram to $NOTIFY_SOCKET. */
static void notify_systemd(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, strlen(path));
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, msg, strlen(msg), 0, (struct sockaddr *)&sa, len) < 0)
		log_warn("sd_notify %s", path);
	close(fd);
}

/*
 * daemon.start: how the previous run ended, so a kill -9 shows as a gap with its bounds
 * (null on a new journal).
 */
static void previous_run_fields(struct daemon *d, struct event *e)
{
	struct journal_prev p;

	journal_previous_run(d->journal, &p);
	if (!p.exists) {
		event_null(e, "previous_stop");
		event_null(e, "previous_last_seq");
		event_null(e, "previous_last_ts");
		event_null(e, "previous_last_heartbeat");
		return;
	}
	event_str(e, "previous_stop", p.clean ? "clean" : "unclean");
	event_uint(e, "previous_last_seq", p.last_seq);
	event_str(e, "previous_last_ts", p.last_ts);
	event_str(e, "previous_last_heartbeat", p.last_heartbeat[0] ? p.last_heartbeat : NULL);
}

static void emit_lifecycle(struct daemon *d, const char *type, const char *reason)
{
	struct event *e = event_new(type, NULL, EVENT_SRC_SANDGATE);
	int ret;

	if (!e)
		return;
	event_str(e, "version", SANDGATE_VERSION);
	event_int(e, "pid", getpid());
	event_str(e, "config", d->opts.config_path);
	event_str(e, "state_dir", d->cfg->state_dir);
	event_str(e, "control", d->cfg->control_socket);
	event_str(e, "reason", reason);
	if (strcmp(type, "daemon.start") == 0) {
		daemon_audit_start_fields(d, e);   /* exec_source and why (docs/audit.md) */
		previous_run_fields(d, e);
	}
	ret = event_emit(e);
	if (ret)
		log_errno(ret, "cannot record %s", type);
}

static int daemon_open_journal(struct daemon *d)
{
	struct journal_stats st;
	struct journal_settings js;
	struct note_signer *signer = NULL;
	char err[1024], origin[256];
	int ret;

	journal_settings_default(&js, d->cfg->state_dir, d->cfg->host);
	js.segment_max_bytes = d->cfg->journal.segment_max_bytes;
	js.segment_max_age_ms = d->cfg->journal.segment_max_age_ms;
	js.fsync = (enum journal_fsync)d->cfg->journal.fsync;
	js.checkpoint_interval_ms = d->cfg->journal.checkpoint_interval_ms;
	js.checkpoint_events = d->cfg->journal.checkpoint_events;
	js.heartbeat_interval_ms = d->cfg->journal.heartbeat_interval_ms;
	js.queue_capacity = d->cfg->journal.queue_capacity;
	js.handoff_bytes = d->cfg->journal.shape_memory;
	js.witness_dir = d->cfg->journal.witness_dir;
	snprintf(origin, sizeof(origin), "sandgate/%s", d->cfg->host);
	js.origin = d->cfg->journal.origin ? d->cfg->journal.origin : origin;
	ret = keystore_open(d->cfg->state_dir, js.origin, &signer, err, sizeof(err));
	if (ret == 0)
		ret = journal_open(&d->journal, &js, signer, err, sizeof(err));
	if (ret) {
		log_warnx("%s", err);
		return ret;
	}
	ret = journal_start(d->journal);
	if (ret) {
		log_errno(ret, "%s: cannot start the journal", d->cfg->state_dir);
		return ret;
	}
	event_set_sink(health_submit, d);   /* journal_submit, counting sensor losses */
	journal_get_stats(d->journal, &st);
	if (st.witness_same_fs)
		log_warnx("journal.witness_dir %s is on the state dir's filesystem: a rollback "
			  "that reaches one reaches the other", d->cfg->journal.witness_dir);
	if (st.witness_rollback)
		log_warnx("journal: rolled back below the witness's last checkpoint "
			  "(journal.rollback recorded)");
	d->first_seq = st.next_seq;
	return 0;
}

/* Loads the config file for a reload: every error on stderr, the first one in err. */
static int reload_load(struct daemon *d, struct sg_config **out, char *err, size_t errlen)
{
	struct config_errors errs = CONFIG_ERRORS_INIT;
	int ret;

	if (!d->opts.config_path)
		return daemon_load_config(&d->opts, out);
	ret = config_load_file(d->opts.config_path, out, &errs);
	if (ret) {
		config_errors_print(&errs, stderr);
		if (config_errors_count(&errs) > 0)
			config_error_format(config_errors_at(&errs, 0), err, errlen);
		else
			snprintf(err, errlen, "%s: %s", d->opts.config_path, strerror(-ret));
	}
	config_errors_free(&errs);
	if (ret == 0)
		ret = daemon_host_resolvers(*out);
	if (ret == 0 && d->opts.state_dir)
		ret = replace_str(&(*out)->state_dir, d->opts.state_dir);
	if (ret == 0 && d->opts.control_path)
		ret = replace_str(&(*out)->control_socket, d->opts.control_path);
	return ret;
}

/*
 * The replaced config stays allocated until exit: parts started with it (the audit
 * sensors' marks and sensitive paths, the sinks, the metrics listener) keep pointers
 * into it. A reload costs one config's memory.
 */
static void retire(struct daemon *d, struct sg_config *old)
{
	struct sg_config **v = realloc(d->retired, (d->n_retired + 1) * sizeof(*v));

	if (!v) {
		log_warnx("reload: out of memory keeping the old config (leaked)");
		return;
	}
	v[d->n_retired++] = old;
	d->retired = v;
}

int daemon_reload(struct daemon *d, char *err, size_t errlen)
{
	struct sg_config *fresh = NULL;
	struct event *e;
	int ret;

	err[0] = '\0';
	ret = reload_load(d, &fresh, err, errlen);
	/* The policies compile before anything is swapped: a bad one changes nothing. */
	if (ret == 0)
		ret = daemon_gateway_reload(d, fresh, err, errlen);
	e = event_new("daemon.reload", NULL, EVENT_SRC_SANDGATE);
	if (e) {
		event_bool(e, "ok", ret == 0);
		event_str(e, "config", d->opts.config_path);
		event_str(e, "error", ret ? (err[0] ? err : "configuration invalid") : NULL);
		event_str(e, "kept", ret ? "the running configuration is kept" : NULL);
		event_emit(e);
	}
	if (ret) {
		if (err[0])
			log_warnx("reload refused: %s", err);
		config_free(fresh);
		return ret;
	}
	/* What only a restart can change stays as it is; the rest is taken. */
	replace_str(&fresh->state_dir, d->cfg->state_dir);
	replace_str(&fresh->control_socket, d->cfg->control_socket);
	replace_str(&fresh->host, d->cfg->host);
	retire(d, d->cfg);
	d->cfg = fresh;
	daemon_sessions_configure(d);
	log_set_level((enum log_level)fresh->log_level);
	detect_reload(d);   /* the rules files the new config names; refusal is recorded */
	return 0;
}

static void on_signal(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct signalfd_siginfo si;
	struct daemon *d = ctx;

	(void)events;
	if (read(fd, &si, sizeof(si)) != sizeof(si))
		return;
	if (si.ssi_signo == SIGHUP) {
		log_info("SIGHUP: reloading %s", d->opts.config_path ? d->opts.config_path
								  : "(embedded defaults)");
		char err[512];

		(void)daemon_reload(d, err, sizeof(err));
		return;
	}
	loop_stop(l);
}

static int daemon_open_loop(struct daemon *d, const sigset_t *mask)
{
	struct control_settings cs;
	char err[1024];
	int ret;

	ret = loop_new(&d->loop);
	if (ret)
		return ret;
	d->sigfd = signalfd(-1, mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d->sigfd < 0)
		return -errno;
	ret = loop_add(d->loop, d->sigfd, EPOLLIN, on_signal, d);
	if (ret)
		return ret;
	cs.path = d->cfg->control_socket;
	cs.group = d->cfg->control_group;
	cs.session_cgroup = d->session_prefix;
	ret = control_open(&d->control, &cs, d->loop, err, sizeof(err));
	if (ret) {
		log_warnx("%s", err);
		return ret;
	}
	ret = daemon_register_core_verbs(d);
	if (ret)
		return ret;
	ret = daemon_gateway_init(d);
	if (ret) {
		log_errno(ret, "cannot start the gateway");
		return ret;
	}
	ret = daemon_sessions_init(d);
	if (ret) {
		log_errno(ret, "cannot start the session registry");
		return ret;
	}
	ret = daemon_gateway_install(d);
	if (ret) {
		log_errno(ret, "cannot install the gateway's ruleset");
		return ret;
	}
	ret = daemon_tamper_init(d);
	if (ret) {
		log_errno(ret, "cannot watch the gateway's ruleset");
		return ret;
	}
	ret = daemon_audit_init(d);
	if (ret) {
		log_errno(ret, "cannot start the audit sensors");
		return ret;
	}
	ret = daemon_escape_init(d);
	if (ret) {
		log_errno(ret, "cannot watch for session escapes");
		return ret;
	}
	ret = daemon_investigation_init(d);
	if (ret) {
		log_errno(ret, "cannot start the index and sinks");
		return ret;
	}
	ret = daemon_detect_init(d);
	if (ret) {
		log_errno(ret, "cannot start detection");
		return ret;
	}
	/*
	 * Last, so every counter it renders exists; with the gateway on it already runs.
	 * Not fatal: nothing else depends on being scraped.
	 */
	ret = daemon_metrics_init(d);
	if (ret)
		log_errno(ret, "metrics: cannot listen on %s", d->cfg->metrics_listen);
	return 0;
}

static void daemon_teardown(struct daemon *d, const char *reason)
{
	int ret;

	daemon_metrics_fini(d);   /* first: it reads the counters of every part below */
	daemon_detect_fini(d);
	daemon_investigation_fini(d);
	daemon_escape_fini(d);
	daemon_audit_fini(d);
	daemon_sessions_fini(d);
	daemon_tamper_fini(d);
	daemon_gateway_fini(d);
	if (d->journal) {
		emit_lifecycle(d, "daemon.stop", reason);
		event_set_sink(NULL, NULL);
		ret = journal_close(d->journal);
		if (ret)
			log_errno(ret, "%s: journal did not close cleanly", d->cfg->state_dir);
	}
	control_close(d->control);
	if (d->sigfd >= 0)
		close(d->sigfd);
	loop_free(d->loop);
	config_free(d->cfg);
	for (size_t i = 0; i < d->n_retired; i++)
		config_free(d->retired[i]);
	free(d->retired);
}

int daemon_main(const struct daemon_opts *opts)
{
	struct daemon d = { .opts = *opts, .sigfd = -1, .health.tfd = -1 };
	sigset_t mask;
	int ret;

	/* Blocked before any thread exists, so only the signalfd sees them. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	clock_gettime(CLOCK_REALTIME, &d.started);

	ret = daemon_load_config(opts, &d.cfg);
	if (ret)
		return 1;
	log_set_level((enum log_level)d.cfg->log_level);   /* same order as sg_log_level */
	/* Before anything in the state dir is touched: one daemon per directory. */
	if (daemon_lock_state(d.cfg->state_dir)) {
		config_free(d.cfg);
		return 1;
	}
	ret = daemon_cgroup2_root(d.cfg->cgroup.root, d.cgroup_root, sizeof(d.cgroup_root));
	snprintf(d.session_prefix, sizeof(d.session_prefix), "/%s", d.cfg->cgroup.parent);
	if (ret == 0)
		ret = daemon_open_journal(&d);
	if (ret == 0) {
		emit_lifecycle(&d, "daemon.start", NULL);
		ret = daemon_open_loop(&d, &mask);
	}
	if (ret == 0) {
		log_info("running: state %s, control %s", d.cfg->state_dir, d.cfg->control_socket);
		notify_systemd("READY=1");
		ret = loop_run(d.loop);
		notify_systemd("STOPPING=1");
	}
	daemon_teardown(&d, ret ? "error" : "signal");
	return ret ? 1 : 0;
}
