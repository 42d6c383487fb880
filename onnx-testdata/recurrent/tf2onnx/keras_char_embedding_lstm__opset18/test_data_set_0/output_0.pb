B
Identity:0J(¶C»êøz;\X»…cæºF6;è¶Dº];½ùº»T;Òtb;