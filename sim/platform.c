typedef int wip_placeholder_platform;
