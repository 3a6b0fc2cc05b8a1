typedef int wip_placeholder_msg;
