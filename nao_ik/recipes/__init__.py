"""What the API is used for, one module each: reachability, pointing, grasp, both arms at once, tracking a
moving target (track) and planning a whole path (path_plan).

Layer: above :mod:`nao_ik.api`, below :mod:`nao_ik.service`.
"""
