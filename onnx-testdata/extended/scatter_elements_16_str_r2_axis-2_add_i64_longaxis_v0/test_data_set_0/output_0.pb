2 A0ß日日02babAßab2 Aé0  2zbßßzzßA2
 z Azz0日2
bAßéééBoutput