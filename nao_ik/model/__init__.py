"""The arm model and NAO's body: the arms' joints and links (arm), their numbers (arm_data, body_data: plain
tuples the robot runtime reads too), the body's shapes (body) and the argument checks every entry point shares
(validate).

Layer: the lowest; imports nothing else of nao_ik.
"""
