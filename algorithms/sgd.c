typedef int wip_placeholder_sgd;
