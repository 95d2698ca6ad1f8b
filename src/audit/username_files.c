/*
 * audit_user_name (username.h) from /etc/passwd alone, for the static build:
 * a statically linked glibc cannot load NSS modules, and getpwuid would make
 * the binary depend on the host's shared libnss_*.so. fgetpwent parses the
 * file without NSS. A user known only to LDAP, sssd or systemd-homed is
 * printed as "?" (check still prints the uid next to it).
 */
#include <pwd.h>
#include <stdio.h>
#include <string.h>

#include "audit/username.h"
#include "util/util.h"

void audit_user_name(uid_t uid, char *buf, size_t size)
{
	FILE *f = fopen("/etc/passwd", "re");
	struct passwd *pw;

	xsnprintf(buf, size, "?");
	if (!f)
		return;
	while ((pw = fgetpwent(f)))
		if (pw->pw_uid == uid) {
			xsnprintf(buf, size, "%s", pw->pw_name);
			break;
		}
	fclose(f);
}
