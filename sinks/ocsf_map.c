/* Event type -> OCSF class and activity (sinks/ocsf.h; docs/ocsf.md). */
#include <string.h>

#include "sinks/ocsf.h"
#include "sinks/ocsf_impl.h"

static const struct ocsf_map maps[] = {
	{ "process.exec", 1007, 1, "Launch" },
	{ "process.exit", 1007, 2, "Terminate" },
	{ "process.uid_change", 1007, 5, "Set User ID" },
	{ "file.create", 1001, 1, "Create" },
	{ "file.read", 1001, 2, "Read" },
	{ "file.write", 1001, 3, "Update" },
	{ "file.delete", 1001, 4, "Delete" },
	{ "file.rename", 1001, 5, "Rename" },
	{ "file.attr", 1001, 6, "Set Attributes" },
	{ "file.mount", 1001, 99, "Mount" },
	{ "file.unmount", 1001, 99, "Unmount" },
	{ "net.connect", 4001, 1, "Open" },
	{ "net.flow", 4001, 6, "Traffic" },
	{ "net.dns", 4003, 6, "Traffic" },
	{ "tool.invoke", 6003, 99, "Invoke" },
	{ "model.summary", 6003, 99, "Invoke" },
	{ "detail.read", 6003, 2, "Read" },
	{ "session.create", 6002, 1, "Install" },
	{ "session.start", 6002, 3, "Start" },
	{ "session.pause", 6002, 7, "Disable" },
	{ "session.resume", 6002, 6, "Enable" },
	{ "session.terminate", 6002, 4, "Stop" },
	{ "session.cleanup", 6002, 2, "Remove" },
	{ "session.attach", 6002, 99, "Attach" },
	{ "session.adopt", 6002, 99, "Adopt" },
	{ "daemon.start", 6002, 3, "Start" },
	{ "daemon.stop", 6002, 4, "Stop" },
	{ "daemon.reload", 6002, 99, "Reload" },
	{ "gateway.start", 6002, 3, "Start" },
	{ "package.install", 6002, 1, "Install" },
	{ "resource.limit", 6002, 99, "Resource Limit" },
	{ "alert", 2004, 1, "Create" },
	{ "control.denied", 3002, 1, "Logon" },
	/* The journal itself is an event log: OCSF's Event Log Activity. */
	{ "journal.open", 1008, 6, "Start" },
	{ "journal.segment", 1008, 5, "Rotate" },
	{ "journal.checkpoint", 1008, 99, "Checkpoint" },
	{ "journal.heartbeat", 1008, 99, "Heartbeat" },
	{ "journal.recovery", 1008, 99, "Recovery" },
	{ "journal.disk_full", 1008, 99, "Disk Full" },
	{ "retention.archive", 1008, 4, "Archive" },
	{ "retention.purge", 1008, 2, "Delete" },
	{ "sensor.loss", 1008, 99, "Events Lost" },
};

const struct ocsf_map *ocsf_map_of(const char *event)
{
	static const struct ocsf_map base = { NULL, 0, 0, "Unknown" };

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		if (strcmp(maps[i].event, event) == 0)
			return &maps[i];
	return &base;
}

int ocsf_class_of(const char *event)
{
	return ocsf_map_of(event)->class_uid;
}

const char *ocsf_class_name(int class_uid)
{
	switch (class_uid) {
	case 1001: return "File System Activity";
	case 1007: return "Process Activity";
	case 1008: return "Event Log Activity";
	case 2004: return "Detection Finding";
	case 3002: return "Authentication";
	case 4001: return "Network Activity";
	case 4003: return "DNS Activity";
	case 6002: return "Application Lifecycle";
	case 6003: return "API Activity";
	default: return "Base Event";
	}
}
