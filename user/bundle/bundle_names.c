// SPDX-License-Identifier: MIT
/* Names of the bundle's section types, as printed in messages and by bundle-info. */
#include "bundle/bundle.h"

const char *mt_bundle_section_name(uint32_t type)
{
	switch (type) {
	case MT_BUNDLE_SEC_CPU: return "cpu";
	case MT_BUNDLE_SEC_PT_CONFIG: return "pt-config";
	case MT_BUNDLE_SEC_PT_DATA: return "pt-data";
	case MT_BUNDLE_SEC_TRIGGER: return "trigger";
	case MT_BUNDLE_SEC_SWITCHES: return "switches";
	case MT_BUNDLE_SEC_MAPS: return "maps";
	case MT_BUNDLE_SEC_THREADS: return "threads";
	case MT_BUNDLE_SEC_CLOCK: return "clock";
	case MT_BUNDLE_SEC_FILE: return "file";
	case MT_BUNDLE_SEC_KTEXT: return "ktext";
	case MT_BUNDLE_SEC_KALLSYMS: return "kallsyms";
	case MT_BUNDLE_SEC_MODULES: return "modules";
	case MT_BUNDLE_SEC_END: return "end";
	default: return "unknown";
	}
}
