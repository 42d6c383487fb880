Bgrad_outputJװ?¿¨—¿תת+¿
_L?¥¿p¿ו>