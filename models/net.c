typedef int wip_placeholder_net;
