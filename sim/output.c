typedef int wip_placeholder_output;
