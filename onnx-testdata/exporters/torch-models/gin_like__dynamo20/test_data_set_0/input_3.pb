B
graph_attrJŒÍ=xãx¾7ò>xfB?QeŒ¿ú	&>