B
Identity:0J08▐?\⌡/©О09?vw┬>╦G.>cю╢©жд°?=lП>▌M>В░ь?Hk2?ow?