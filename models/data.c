typedef int wip_placeholder_data;
