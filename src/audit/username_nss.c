/*
 * audit_user_name (username.h) through getpwuid, so every source the
 * system's NSS configuration names is asked. The ordinary, dynamically
 * linked build.
 */
#include <pwd.h>

#include "audit/username.h"
#include "util/util.h"

void audit_user_name(uid_t uid, char *buf, size_t size)
{
	struct passwd *pw = getpwuid(uid);

	xsnprintf(buf, size, "%s", pw ? pw->pw_name : "?");
}
